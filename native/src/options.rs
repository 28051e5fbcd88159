//! A job's options (ENQUEUE's and SCHEDULE's `opts`; the twin of the Lua prelude's
//! `emq_options`): `key=value` items joined by NUL, each key an option of the spec (`spec::OPTIONS`)
//! given once, each value through its option's gate, each option's `needs` present. Pure code:
//! step 4 runs [`parse`] on every options argument, and a handler reads the parsed values back.

use crate::gates;
use crate::keyspace::{valid_name, MAX_NAME_BYTES};
use crate::spec::{MAX_OPTIONS_BYTES, OPTIONS};
use crate::wire::{Gate, Opt, Refusal};

/// One job's options after their gates: each given option with its value as sent and, for a
/// number, as parsed.
#[derive(Debug, Default)]
pub struct Options<'a> {
    given: Vec<(&'static Opt, &'a [u8], i64)>,
}

impl<'a> Options<'a> {
    /// The value of option `name` as sent (a name's bytes), when given.
    pub fn bytes(&self, name: &str) -> Option<&'a [u8]> {
        self.given
            .iter()
            .find(|(o, ..)| o.name == name)
            .map(|&(_, v, _)| v)
    }

    /// The value of number option `name`, when given.
    pub fn number(&self, name: &str) -> Option<i64> {
        self.given
            .iter()
            .find(|(o, ..)| o.name == name)
            .map(|&(.., n)| n)
    }
}

/// Step 4 of an options argument, in the spec's order: length, then each item's form, key (known,
/// once) and value gate, then each option's `needs` in `OPTIONS` order.
pub fn parse(text: &[u8]) -> Result<Options<'_>, Refusal> {
    if text.len() > MAX_OPTIONS_BYTES {
        return Err(Refusal::Options(MAX_OPTIONS_BYTES));
    }
    let mut out = Options::default();
    if text.is_empty() {
        return Ok(out);
    }
    for item in text.split(|&b| b == 0) {
        let eq = item.iter().position(|&b| b == b'=');
        let (key, value) = match eq {
            Some(at) if at > 0 => (&item[..at], &item[at + 1..]),
            _ => return Err(Refusal::OptionForm),
        };
        let opt = OPTIONS
            .iter()
            .find(|o| o.name.as_bytes() == key)
            .ok_or_else(|| Refusal::OptionUnknown(key.to_vec()))?;
        if out.given.iter().any(|(o, ..)| std::ptr::eq(*o, opt)) {
            return Err(Refusal::OptionRepeated(opt.name));
        }
        let n = gate(opt, value)?;
        out.given.push((opt, value, n));
    }
    for opt in &OPTIONS {
        let needs = opt.needs.filter(|_| out.bytes(opt.name).is_some());
        if let Some(needs) = needs.filter(|n| out.bytes(n).is_none()) {
            return Err(Refusal::OptionNeeds(opt.name, needs));
        }
    }
    Ok(out)
}

/// An option's value through its gate (a number's value, else 0).
fn gate(opt: &Opt, value: &[u8]) -> Result<i64, Refusal> {
    match opt.gate {
        Gate::Name if valid_name(value) => Ok(0),
        Gate::Name => Err(Refusal::Name(opt.name, MAX_NAME_BYTES)),
        Gate::Number { min, max, digits } => {
            let n = gates::digits_up_to(value, digits).filter(|&n| n >= min);
            let n = n.ok_or_else(|| Refusal::number(opt.name, min))?;
            match max {
                Some(max) if n > max => Err(Refusal::TooLarge(opt.name, max)),
                _ => Ok(n as i64),
            }
        }
        Gate::JobId | Gate::Lane | Gate::Bytes { .. } | Gate::Options => {
            unreachable!("the spec's options are numbers and names")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(text: &[u8]) -> String {
        parse(text).map(|_| ()).unwrap_err().name().to_string()
    }

    #[test]
    fn values() {
        let o = parse(b"timeout_ms=30000\0dedup=order:42\0dedup_ms=5").unwrap();
        assert_eq!(o.number("timeout_ms"), Some(30000));
        assert_eq!(o.bytes("dedup"), Some(&b"order:42"[..]));
        assert_eq!(o.number("dedup_ms"), Some(5));
        assert_eq!(o.bytes("debounce"), None);
        assert_eq!(parse(b"lane=a:b").unwrap().bytes("lane"), Some(&b"a:b"[..]));
        assert!(parse(b"").unwrap().bytes("dedup").is_none());
        // a value is everything after the first '='
        assert_eq!(
            parse(b"dedup=a=b").unwrap().bytes("dedup"),
            Some(&b"a=b"[..])
        );
    }

    #[test]
    fn refusals_in_order() {
        assert_eq!(refusal(&vec![b'x'; MAX_OPTIONS_BYTES + 1]), "options");
        let cases: [(&[u8], &str); 13] = [
            (b"dedup", "option-form"),
            (b"=x", "option-form"),
            (b"dedup=a\0", "option-form"),
            (b"colour=a", "option-unknown"),
            (b"dedup=a\0dedup=b", "option-repeated"),
            (b"timeout_ms=0", "positive"),
            (b"timeout_ms=-1", "positive"),
            (b"debounce=2\0dedup=a", "too-large"),
            (b"dedup=a{b", "name"),
            (b"dedup=", "name"),
            (b"dedup_ms=10", "option-needs"),
            (b"debounce=1", "option-needs"),
            // the first broken item is named, before any later one
            (b"colour=a\0x", "option-unknown"),
        ];
        for (text, want) in cases {
            assert_eq!(refusal(text), want, "{:?}", String::from_utf8_lossy(text));
        }
        assert_eq!(
            parse(b"colour=a").unwrap_err(),
            Refusal::OptionUnknown(b"colour".to_vec())
        );
        assert_eq!(
            parse(b"dedup_ms=1").unwrap_err(),
            Refusal::OptionNeeds("dedup_ms", "dedup")
        );
    }
}
