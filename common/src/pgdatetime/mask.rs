//! The parts a field sets, one bit per PostgreSQL token type.

pub const RESERVED: u32 = 1 << 0;
pub const MONTH: u32 = 1 << 1;
pub const YEAR: u32 = 1 << 2;
pub const DAY: u32 = 1 << 3;
pub const TZ: u32 = 1 << 5;
pub const DTZ: u32 = 1 << 6;
pub const DYNTZ: u32 = 1 << 7;
pub const AMPM: u32 = 1 << 9;
pub const HOUR: u32 = 1 << 10;
pub const MINUTE: u32 = 1 << 11;
pub const SECOND: u32 = 1 << 12;
pub const MILLISECOND: u32 = 1 << 13;
pub const MICROSECOND: u32 = 1 << 14;
pub const DOY: u32 = 1 << 15;
pub const DOW: u32 = 1 << 16;
pub const ADBC: u32 = 1 << 18;
pub const DTZMOD: u32 = 1 << 28;
pub const ALL_SECS: u32 = SECOND | MILLISECOND | MICROSECOND;
pub const DATE: u32 = YEAR | MONTH | DAY;
pub const TIME: u32 = HOUR | MINUTE | ALL_SECS;
