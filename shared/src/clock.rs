//! Time, behind a port so tests can control it. Responses render UTC `YYYY-MM-DD HH:MM:SS`.

use chrono::{DateTime, Utc};

pub trait Clock: Send + Sync {
    fn now(&self) -> DateTime<Utc>;
}

pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// The response timestamp format of part 1.
pub fn timestamp(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M:%S").to_string()
}

/// A clock that stands still where it is set (tests of schedules and business days).
pub struct SettableClock(std::sync::Mutex<Option<DateTime<Utc>>>);

impl SettableClock {
    /// Follows the system clock until [`SettableClock::set`].
    pub fn system() -> Self {
        SettableClock(std::sync::Mutex::new(None))
    }

    /// Stops the clock at `t`.
    pub fn set(&self, t: DateTime<Utc>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(t);
    }
}

impl Clock for SettableClock {
    fn now(&self) -> DateTime<Utc> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .unwrap_or_else(Utc::now)
    }
}
