//! The dispatcher every verb goes through: it answers the getkeys callback, then runs steps 1–4 of
//! `docs/WIRE.md` once for every verb from its [`Verb`] value — shape, layout, fence, gates — and
//! hands the handler the queue and the gated arguments; the handler runs steps 5–6. The reply (or
//! the refusal's exact text) goes back from here. Safe code: the C API is behind `ffi`.

use crate::config;
use crate::ffi::{lit, Ctx, Kind, Owned, Str};
use crate::gates;
use crate::keyspace::{self, Queue};
use crate::verbs::VERBS;
use crate::wire::{Gate, Refusal, Role, Verb, WIRE};

/// One call: its context, argv and verb.
pub struct Call<'a> {
    /// The command context.
    pub ctx: Ctx<'a>,
    argv: &'a [Str<'a>],
    verb: &'static Verb,
}

impl<'a> Call<'a> {
    /// The verb being run.
    pub fn verb(&self) -> &'static Verb {
        self.verb
    }

    /// Declared key `i` (0-based), after a successful shape check.
    pub fn key(&self, i: usize) -> Str<'a> {
        self.argv[2 + i]
    }
}

/// An argument after its gate: bytes, or a parsed number.
#[derive(Clone, Copy)]
enum Value<'a> {
    Bytes(Str<'a>),
    Number(i64),
}

/// The arguments of a call, in the verb's order, each through its gate.
pub struct Args<'a> {
    values: Vec<Value<'a>>,
}

impl<'a> Args<'a> {
    /// Argument `i` as sent (an id, a payload, a reason).
    pub fn bytes(&self, i: usize) -> Str<'a> {
        match self.values[i] {
            Value::Bytes(s) => s,
            Value::Number(_) => unreachable!("argument {i} is a number"),
        }
    }

    /// Argument `i` as the number its gate parsed.
    pub fn number(&self, i: usize) -> i64 {
        match self.values[i] {
            Value::Number(n) => n,
            Value::Bytes(_) => unreachable!("argument {i} is not a number"),
        }
    }
}

/// A successful reply.
pub enum Reply<'a> {
    /// An integer.
    Int(i64),
    /// Nil (CLAIM on an empty queue).
    Nil,
    /// CLAIM's `[id, payload, attempts]`.
    Claimed {
        id: Owned<'a>,
        payload: Option<Owned<'a>>,
        attempts: i64,
    },
}

/// A verb's steps 5–6: domain checks, then every write (or nothing).
pub type Handler = for<'a> fn(&Call<'a>, &Queue<'a>, &Args<'a>) -> Result<Reply<'a>, Refusal>;

/// Runs verb `index` of [`VERBS`] on one call's argv.
pub fn dispatch<'a>(ctx: Ctx<'a>, argv: &'a [Str<'a>], index: usize) {
    let (verb, handler) = VERBS[index];
    if ctx.keys_request() {
        // getkeys callback: declare argv[2 .. 2+numkeys) when numkeys is the verb's and fits.
        if argv.len() >= 2 + verb.keys.len() && argv[1].bytes() == numkeys(verb).as_bytes() {
            for pos in 2..2 + verb.keys.len() {
                ctx.key_at(pos);
            }
        }
        return;
    }
    let call = Call { ctx, argv, verb };
    let outcome = steps(&call).and_then(|(q, args)| handler(&call, &q, &args));
    match outcome {
        Ok(Reply::Int(n)) => ctx.reply_int(n),
        Ok(Reply::Nil) => ctx.reply_nil(),
        Ok(Reply::Claimed {
            id,
            payload,
            attempts,
        }) => {
            ctx.reply_array(3);
            ctx.reply_str(id.as_str());
            match payload {
                Some(p) => ctx.reply_str(p.as_str()),
                None => ctx.reply_nil(),
            }
            ctx.reply_int(attempts);
        }
        Err(refusal) => ctx.reply_error(&refusal.text(verb)),
    }
}

/// The decimal numkeys a call of `verb` must carry.
fn numkeys(verb: &Verb) -> String {
    verb.keys.len().to_string()
}

/// Steps 1–4, in order; the first failure is the reply.
fn steps<'a>(call: &Call<'a>) -> Result<(Queue<'a>, Args<'a>), Refusal> {
    let verb = call.verb;
    // 1. shape: numkeys is exactly the verb's (byte for byte, as EVAL parses it) and so is argc.
    if call.argv.len() != verb.argc() || call.argv[1].bytes() != numkeys(verb).as_bytes() {
        return Err(Refusal::Arity);
    }
    let args = &call.argv[2 + verb.keys.len()..];
    let q = layout(call, args)?;
    fence(call.ctx)?;
    Ok((q, gates(verb, args)?))
}

/// Step 2: recover one queue name from the first key (a row's type must be `job:` + the id
/// argument, byte for byte), then every other key must be exactly that queue's key of its role.
fn layout<'a>(call: &Call<'a>, args: &'a [Str<'a>]) -> Result<Queue<'a>, Refusal> {
    let verb = call.verb;
    let id = verb.id_arg().map(|i| args[i].bytes()).unwrap_or_default();
    let first = call.key(0).bytes();
    let q = match verb.keys[0] {
        Role::Row => {
            let (name, ty) = keyspace::split_queue_key(first).ok_or(Refusal::Layout)?;
            match ty.strip_prefix(keyspace::JOB) {
                Some(found) if found == id => Queue::new(name),
                _ => None,
            }
        }
        role => Queue::from_key(first, role.ty()),
    }
    .ok_or(Refusal::Layout)?;
    for (i, role) in verb.keys.iter().enumerate().skip(1) {
        let key = call.key(i).bytes();
        let ok = match role {
            Role::Row => q.is_job_key(key, id),
            r => q.is_key(key, r.ty()),
        };
        if !ok {
            return Err(Refusal::Layout);
        }
    }
    Ok(q)
}

/// Step 3: the node's `emq.wire` must be 4; on a standalone server the string key
/// `{emq}:version`, when present, must be `4` (a key of another type counts as absent).
fn fence(ctx: Ctx) -> Result<(), Refusal> {
    let w = config::wire();
    if w != WIRE {
        return Err(Refusal::Fenced(w.to_string().into_bytes()));
    }
    if !ctx.cluster_mode() {
        if let Some(k) = ctx.read(lit().version_key) {
            if k.kind() == Kind::String && k.string() != WIRE.to_string().as_bytes() {
                return Err(Refusal::Fenced(k.string().to_vec()));
            }
        }
    }
    Ok(())
}

/// Step 4: every argument through its gate, in argument order.
fn gates<'a>(verb: &Verb, args: &'a [Str<'a>]) -> Result<Args<'a>, Refusal> {
    let mut values = Vec::with_capacity(args.len());
    for (spec, &arg) in verb.args.iter().zip(args) {
        let b = arg.bytes();
        values.push(match spec.gate {
            Gate::JobId if gates::job_id(b) => Value::Bytes(arg),
            Gate::JobId => return Err(Refusal::NotJobId),
            Gate::Number { min } => {
                let n = gates::digits(b).filter(|&n| n >= min);
                Value::Number(n.ok_or(Refusal::Number(spec.name, min >= 1))? as i64)
            }
            Gate::Payload => {
                let limit = config::max_payload();
                if b.len() as i64 > limit {
                    return Err(Refusal::PayloadTooLarge(limit));
                }
                Value::Bytes(arg)
            }
            Gate::Reason if b.len() > gates::MAX_REASON => return Err(Refusal::ReasonTooLarge),
            Gate::Reason => Value::Bytes(arg),
        });
    }
    Ok(Args { values })
}
