//! ATS market hours (CONTRACT, "ATS"): a client's global week, Monday-Friday 09:30-16:00
//! Eastern by default with the weekend closed, and a security's own Monday-Friday hours
//! that replace the global ones for the days they name. `HH:MM` from `00:00` to `24:00`,
//! start before end.

use chrono::{DateTime, Datelike, Duration, NaiveDate, NaiveTime, TimeZone, Utc};
use serde::{Deserialize, Serialize};

use crate::calendar::EASTERN;

/// The week's day names, Monday first, as the request and stored field names spell them.
pub const DAYS: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// One day's session, in minutes after midnight Eastern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DayHours {
    pub closed: bool,
    pub start: u16,
    pub end: u16,
}

impl DayHours {
    pub const CLOSED: DayHours = DayHours {
        closed: true,
        start: 0,
        end: 0,
    };

    pub fn open(start: u16, end: u16) -> Self {
        DayHours {
            closed: false,
            start,
            end,
        }
    }

    /// The session from `start` to `end` (`HH:MM`), or `None` when either is not a time
    /// from `00:00` to `24:00` or the start is not before the end.
    pub fn parse(start: &str, end: &str) -> Option<Self> {
        let (start, end) = (minutes(start)?, minutes(end)?);
        (start < end).then(|| DayHours::open(start, end))
    }
}

/// `HH:MM` from `00:00` to `24:00` as minutes after midnight.
pub fn minutes(hhmm: &str) -> Option<u16> {
    let (h, m) = hhmm.split_once(':')?;
    if h.len() != 2 || m.len() != 2 {
        return None;
    }
    let (h, m): (u16, u16) = (h.parse().ok()?, m.parse().ok()?);
    let total = h * 60 + m;
    (m < 60 && total <= 24 * 60).then_some(total)
}

/// The two-digit hours and minutes of `minutes` after midnight.
pub fn hhmm(minutes: u16) -> (String, String) {
    (format!("{:02}", minutes / 60), format!("{:02}", minutes % 60))
}

/// A week of sessions, Monday first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Week(pub [DayHours; 7]);

impl Default for Week {
    fn default() -> Self {
        let day = DayHours::open(9 * 60 + 30, 16 * 60);
        Week([day, day, day, day, day, DayHours::CLOSED, DayHours::CLOSED])
    }
}

/// A security's own Monday-Friday hours; `None` follows the client's week.
pub type SecurityHours = [Option<DayHours>; 5];

impl Week {
    /// This week with a security's own days in place of the global ones.
    pub fn with_security(mut self, own: &SecurityHours) -> Week {
        for (day, hours) in self.0.iter_mut().zip(own) {
            if let Some(h) = hours {
                *day = *h;
            }
        }
        self
    }

    fn day(&self, date: NaiveDate) -> DayHours {
        self.0[date.weekday().num_days_from_monday() as usize]
    }

    /// The session of `date` as instants, `None` when the market is closed that day.
    fn session(&self, date: NaiveDate) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
        let d = self.day(date);
        if d.closed {
            return None;
        }
        Some((at(date, d.start), at(date, d.end)))
    }

    /// Whether the market is open at `now`.
    pub fn is_open(&self, now: DateTime<Utc>) -> bool {
        let today = now.with_timezone(&EASTERN).date_naive();
        self.session(today)
            .is_some_and(|(start, end)| start <= now && now < end)
    }

    /// When the session that is open at `now` closes, or else the next session's close
    /// (a `Day` order's expiry); `None` when no day of the week opens.
    pub fn day_close(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let today = now.with_timezone(&EASTERN).date_naive();
        (0..8)
            .filter_map(|n| self.session(today + Duration::days(n)))
            .map(|(_, end)| end)
            .find(|end| *end > now)
    }

    /// The close of `date`'s session, or the end of that day when it has none (an `Other`
    /// order's expiry).
    pub fn close_of(&self, date: NaiveDate) -> DateTime<Utc> {
        self.session(date).map_or_else(|| at(date, 24 * 60), |(_, end)| end)
    }
}

/// `minutes` after midnight Eastern on `date`, as an instant (`24:00` is the next midnight;
/// a time that a clock change skips is taken an hour later).
fn at(date: NaiveDate, minutes: u16) -> DateTime<Utc> {
    let (date, minutes) = if minutes >= 24 * 60 {
        (date + Duration::days(1), minutes - 24 * 60)
    } else {
        (date, minutes)
    };
    let time = NaiveTime::from_hms_opt(u32::from(minutes / 60), u32::from(minutes % 60), 0).unwrap_or_default();
    let local = date.and_time(time);
    EASTERN
        .from_local_datetime(&local)
        .earliest()
        .or_else(|| EASTERN.from_local_datetime(&(local + Duration::hours(1))).earliest())
        .map_or_else(|| Utc.from_utc_datetime(&local), |t| t.with_timezone(&Utc))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eastern(y: i32, m: u32, d: u32, h: u32, min: u32) -> DateTime<Utc> {
        EASTERN
            .with_ymd_and_hms(y, m, d, h, min, 0)
            .single()
            .expect("a local time")
            .with_timezone(&Utc)
    }

    #[test]
    fn times_are_hh_mm_from_midnight_to_midnight() {
        assert_eq!(minutes("09:30"), Some(570));
        assert_eq!(minutes("24:00"), Some(1440));
        for bad in ["24:01", "9:30", "09:60", "0930", "", "aa:bb", "-1:00"] {
            assert_eq!(minutes(bad), None, "{bad}");
        }
        assert_eq!(DayHours::parse("16:00", "09:30"), None);
        assert_eq!(DayHours::parse("10:00", "10:00"), None);
        assert_eq!(hhmm(570), ("09".into(), "30".into()));
    }

    #[test]
    fn the_default_week_is_weekdays_half_past_nine_to_four_eastern() {
        let w = Week::default();
        // Wednesday 25 November 2026.
        assert!(!w.is_open(eastern(2026, 11, 25, 9, 29)));
        assert!(w.is_open(eastern(2026, 11, 25, 9, 30)));
        assert!(w.is_open(eastern(2026, 11, 25, 15, 59)));
        assert!(!w.is_open(eastern(2026, 11, 25, 16, 0)));
        assert!(!w.is_open(eastern(2026, 11, 28, 12, 0)), "Saturday");
    }

    #[test]
    fn a_day_order_expires_at_this_close_or_the_next_sessions() {
        let w = Week::default();
        let close = eastern(2026, 11, 27, 16, 0);
        assert_eq!(w.day_close(eastern(2026, 11, 27, 10, 0)), Some(close));
        assert_eq!(w.day_close(eastern(2026, 11, 27, 8, 0)), Some(close));
        // Friday evening: Monday's close.
        assert_eq!(
            w.day_close(eastern(2026, 11, 27, 17, 0)),
            Some(eastern(2026, 11, 30, 16, 0))
        );
        assert_eq!(Week([DayHours::CLOSED; 7]).day_close(close), None);
    }

    #[test]
    fn a_securitys_own_days_replace_the_global_ones() {
        let own: SecurityHours = [
            Some(DayHours::CLOSED),
            None,
            None,
            None,
            DayHours::parse("08:00", "20:00"),
        ];
        let w = Week::default().with_security(&own);
        assert!(!w.is_open(eastern(2026, 11, 23, 12, 0)), "Monday closed");
        assert!(w.is_open(eastern(2026, 11, 24, 12, 0)), "Tuesday global");
        assert!(w.is_open(eastern(2026, 11, 27, 19, 0)), "Friday until 20:00");
        let friday = NaiveDate::from_ymd_opt(2026, 11, 27).expect("date");
        assert_eq!(w.close_of(friday), eastern(2026, 11, 27, 20, 0));
        let saturday = NaiveDate::from_ymd_opt(2026, 11, 28).expect("date");
        assert_eq!(w.close_of(saturday), eastern(2026, 11, 29, 0, 0));
    }
}
