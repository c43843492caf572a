//! Business days and the local times batches run at (CONTRACT, "Payments, custody and
//! escrow"): Monday to Friday except US federal bank holidays, in the batch's own zone.

use chrono::{DateTime, Datelike, NaiveDate, Utc, Weekday};
use chrono_tz::Tz;

/// The zone of the ACH and card batch (6:00 PM) and of escrow reconciliation.
pub const EASTERN: Tz = chrono_tz::America::New_York;
/// The zone of the custody processing (8:00 AM).
pub const MOUNTAIN: Tz = chrono_tz::America::Denver;

/// The `n`th (1-based) `weekday` of a month.
fn nth(year: i32, month: u32, weekday: Weekday, n: u8) -> Option<NaiveDate> {
    NaiveDate::from_weekday_of_month_opt(year, month, weekday, n)
}

/// The last `weekday` of a month.
fn last(year: i32, month: u32, weekday: Weekday) -> Option<NaiveDate> {
    nth(year, month, weekday, 5).or_else(|| nth(year, month, weekday, 4))
}

/// The day a fixed-date holiday is observed: a Sunday one moves to Monday, a Saturday one is
/// not moved (banks do not close the Friday before).
fn observed(d: NaiveDate) -> NaiveDate {
    if d.weekday() == Weekday::Sun {
        d.succ_opt().unwrap_or(d)
    } else {
        d
    }
}

/// The US federal bank holidays of `year`, as observed.
pub fn bank_holidays(year: i32) -> Vec<NaiveDate> {
    let fixed = [(1, 1), (6, 19), (7, 4), (11, 11), (12, 25)]
        .into_iter()
        .filter_map(|(m, d)| NaiveDate::from_ymd_opt(year, m, d))
        .map(observed);
    let floating = [
        nth(year, 1, Weekday::Mon, 3),  // Martin Luther King Jr. Day
        nth(year, 2, Weekday::Mon, 3),  // Presidents' Day
        last(year, 5, Weekday::Mon),    // Memorial Day
        nth(year, 9, Weekday::Mon, 1),  // Labor Day
        nth(year, 10, Weekday::Mon, 2), // Columbus Day
        nth(year, 11, Weekday::Thu, 4), // Thanksgiving
    ]
    .into_iter()
    .flatten();
    let mut days: Vec<NaiveDate> = fixed.chain(floating).collect();
    days.sort_unstable();
    days
}

/// Monday to Friday, not a bank holiday.
pub fn is_business_day(d: NaiveDate) -> bool {
    !matches!(d.weekday(), Weekday::Sat | Weekday::Sun) && !bank_holidays(d.year()).contains(&d)
}

/// The date in `zone` at instant `t`.
pub fn local_date(t: DateTime<Utc>, zone: Tz) -> NaiveDate {
    t.with_timezone(&zone).date_naive()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    #[test]
    fn holidays_of_2026_and_2027() {
        assert_eq!(
            bank_holidays(2026),
            [
                d(2026, 1, 1),
                d(2026, 1, 19),
                d(2026, 2, 16),
                d(2026, 5, 25),
                d(2026, 6, 19),
                d(2026, 7, 4),
                d(2026, 9, 7),
                d(2026, 10, 12),
                d(2026, 11, 11),
                d(2026, 11, 26),
                d(2026, 12, 25),
            ]
        );
        // 2027: Juneteenth on a Saturday stays; Independence Day on a Sunday moves to Monday.
        let h = bank_holidays(2027);
        assert!(h.contains(&d(2027, 6, 19)) && !h.contains(&d(2027, 6, 18)));
        assert!(h.contains(&d(2027, 7, 5)) && !h.contains(&d(2027, 7, 4)));
        assert!(h.contains(&d(2027, 5, 31)), "Memorial Day, the last Monday of May");
    }

    #[test]
    fn business_days() {
        assert!(is_business_day(d(2026, 11, 25)));
        assert!(!is_business_day(d(2026, 11, 26)), "Thanksgiving");
        assert!(!is_business_day(d(2026, 11, 28)), "Saturday");
        assert!(!is_business_day(d(2026, 12, 25)));
        assert!(is_business_day(d(2026, 12, 24)));
    }

    #[test]
    fn eastern_dates_follow_daylight_saving() {
        let t = "2026-11-26T02:30:00Z".parse::<DateTime<Utc>>().unwrap();
        assert_eq!(local_date(t, EASTERN), d(2026, 11, 25), "21:30 EST the day before");
        let t = "2026-07-01T03:30:00Z".parse::<DateTime<Utc>>().unwrap();
        assert_eq!(local_date(t, EASTERN), d(2026, 6, 30), "23:30 EDT");
        assert_eq!(local_date(t, MOUNTAIN), d(2026, 6, 30));
    }
}
