//! Argument gates (step 4 of every verb), pure and unit-tested: the job-id prefix and the
//! numbers. The dispatcher (`command`) applies them to each argument as its spec says.

use crate::spec::{MAX_COUNTER_DIGITS, MAX_DIGITS};

/// The namespace every job id starts with; inside a transition this is all that is checked.
pub const JOB_NAMESPACE: &[u8] = b"JOB";

/// Whether `id` starts with the 3 bytes `JOB`.
pub fn job_id(id: &[u8]) -> bool {
    id.starts_with(JOB_NAMESPACE)
}

/// Parses 1 to 15 ASCII digits and nothing else (no sign, no space); leading zeros are allowed.
pub fn digits(arg: &[u8]) -> Option<u64> {
    digits_up_to(arg, MAX_DIGITS)
}

/// Parses 1 to `most` ASCII digits and nothing else (a token's gate takes 16).
pub fn digits_up_to(arg: &[u8], most: usize) -> Option<u64> {
    if arg.is_empty() || arg.len() > most || !arg.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(arg.iter().fold(0u64, |n, &d| n * 10 + u64::from(d - b'0')))
}

/// Parses a stored counter (a row's `attempts`) the way HINCRBY does: an optional `-`, decimal
/// digits without leading zeros, within i64.
pub fn counter(stored: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(stored).ok()?;
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if digits.len() > 1 && digits.starts_with('0') {
        return None;
    }
    if text == "-0" {
        return None;
    }
    text.parse::<i64>().ok()
}

/// A stored counter a verb increments (a row's `attempts`, `meta`'s totals and `tokens`): an
/// integer as HINCRBY reads it ([`counter`]) of at most [`MAX_COUNTER_DIGITS`] digits.
pub fn bounded_counter(stored: &[u8]) -> Option<i64> {
    let digits = stored.strip_prefix(b"-").unwrap_or(stored).len();
    counter(stored).filter(|_| digits <= MAX_COUNTER_DIGITS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids() {
        assert!(job_id(b"JOB0Nb1VTbfnu4"));
        assert!(job_id(b"JOB"));
        assert!(!job_id(b"JO"));
        assert!(!job_id(b"job0Nb1VTbfnu4"));
        assert!(!job_id(b"ABC0Nb1VTbfnu4"));
        assert!(!job_id(b""));
    }

    #[test]
    fn numbers() {
        assert_eq!(digits(b"0"), Some(0));
        assert_eq!(digits(b"007"), Some(7));
        assert_eq!(digits(b"999999999999999"), Some(999_999_999_999_999));
        assert_eq!(digits(b"1000000000000000"), None);
        for bad in [
            &b""[..],
            b"-1",
            b"+1",
            b" 1",
            b"1 ",
            b"1.5",
            b"1e3",
            b"0x10",
            b"abc",
        ] {
            assert_eq!(digits(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
        assert_eq!(digits(b"000"), Some(0));
        assert_eq!(
            digits_up_to(b"9007199254740991", 16),
            Some(9_007_199_254_740_991)
        );
        assert_eq!(digits_up_to(b"10000000000000000", 16), None);
    }

    #[test]
    fn bounded_counters() {
        assert_eq!(
            bounded_counter(b"999999999999999999"),
            Some(999_999_999_999_999_999)
        );
        assert_eq!(
            bounded_counter(b"-999999999999999999"),
            Some(-999_999_999_999_999_999)
        );
        assert_eq!(bounded_counter(b"1000000000000000000"), None);
        assert_eq!(bounded_counter(b"01"), None);
        assert_eq!(bounded_counter(b"7"), Some(7));
    }

    #[test]
    fn counters() {
        assert_eq!(counter(b"0"), Some(0));
        assert_eq!(counter(b"42"), Some(42));
        assert_eq!(counter(b"-3"), Some(-3));
        assert_eq!(counter(b"01"), None);
        assert_eq!(counter(b"-0"), None);
        assert_eq!(counter(b""), None);
        assert_eq!(counter(b"x"), None);
        // Rust's parse takes a `+`; HINCRBY's reading does not (cargo mutants: `||` → `&&`).
        assert_eq!(counter(b"+5"), None);
        assert_eq!(counter(b"-"), None);
        assert_eq!(counter(b"99999999999999999999"), None);
    }
}
