//! The dispatcher every verb goes through: it answers the getkeys callback, then runs steps 1–4 of
//! `docs/WIRE.md` once for every verb from its [`Verb`] value — shape, layout, fence, gates — and
//! hands the handler a [`Scope`] on the queue and the gated arguments; the handler runs steps 5–6
//! and replies, refuses, or (CLAIM) asks to wait on a key. Safe code: the C API is behind `ffi`,
//! which reaches this layer only through the [`Dispatch`] it is given ([`Dispatcher`]) and the
//! closures a waiting call hands it.

use std::io::Write;

use crate::config;
use crate::ffi::{self, Ctx, Dispatch, Entry, Kind, Owned, Str};
use crate::gates;
use crate::keyspace::{self, Queue, MAX_NAME_BYTES, META};
use crate::literals::lit;
use crate::options::{self, Options};
use crate::spec::{MAX_BATCH, WIRE};
use crate::table::VERBS;
use crate::verbs::scope::Scope;
use crate::wire::{fence_found, Gate, Limit, Refusal, Verb};

/// A verb's steps 5–6: domain checks, then every write (or nothing).
pub type Handler = for<'a> fn(&mut Scope<'a>, &Args<'a>) -> Result<Reply<'a>, Refusal>;

/// One verb as the module registers it (the table `table::VERBS`, generated from the spec).
pub struct Command {
    /// Its call shape.
    pub verb: Verb,
    /// Its steps 5–6.
    pub run: Handler,
    /// Its C entry point: the [`Dispatcher`], with the verb's place in the table.
    pub entry: Entry,
}

/// The dispatcher the C entry points call ([`ffi::entry`]).
pub struct Dispatcher;

impl Dispatch for Dispatcher {
    fn dispatch<'a>(ctx: Ctx<'a>, argv: &'a [Str<'a>], index: usize) {
        dispatch(ctx, argv, index);
    }
}

/// An argument after its gate: bytes, or a parsed number.
#[derive(Clone, Copy)]
enum Value<'a> {
    Bytes(Str<'a>),
    Number(i64),
}

/// The arguments of a call, in the verb's order, each through its gate: the fixed ones, then one
/// group per job.
pub struct Args<'a> {
    values: Vec<Value<'a>>,
    fixed: usize,
    group: usize,
    jobs: usize,
}

impl<'a> Args<'a> {
    fn bytes_at(&self, i: usize) -> Str<'a> {
        match self.values[i] {
            Value::Bytes(s) => s,
            Value::Number(_) => unreachable!("argument {i} is a number"),
        }
    }

    fn number_at(&self, i: usize) -> i64 {
        match self.values[i] {
            Value::Number(n) => n,
            Value::Bytes(_) => unreachable!("argument {i} is not a number"),
        }
    }

    /// Fixed argument `i`, as sent (a name, a spec, a payload).
    pub fn bytes(&self, i: usize) -> Str<'a> {
        self.bytes_at(i)
    }

    /// Fixed argument `i` as the number its gate parsed.
    pub fn number(&self, i: usize) -> i64 {
        self.number_at(i)
    }

    /// How many jobs (groups) the call carries.
    pub fn jobs(&self) -> usize {
        self.jobs
    }

    /// Argument `k` of job `j`'s group, as sent (an id, a payload, a reason).
    pub fn job_bytes(&self, j: usize, k: usize) -> Str<'a> {
        self.bytes_at(self.fixed + j * self.group + k)
    }

    /// Argument `k` of job `j`'s group, as the number its gate parsed.
    pub fn job_number(&self, j: usize, k: usize) -> i64 {
        self.number_at(self.fixed + j * self.group + k)
    }

    /// Argument `k` of job `j`'s group, an options argument, parsed (step 4 gated it).
    pub fn job_options(&self, j: usize, k: usize) -> Options<'a> {
        options::parse(self.job_bytes(j, k).bytes()).unwrap_or_default()
    }

    /// The arguments of one call of another verb made from this call's groups `jobs` (in that
    /// order), each group of it the arguments `fields` of one of them (SETTLE's parts: its ACK,
    /// RETRY, BURY and RELEASE), with no fixed argument.
    pub fn part(&self, jobs: &[usize], fields: &[usize]) -> Args<'a> {
        let values = jobs
            .iter()
            .flat_map(|&j| fields.iter().map(move |&k| (j, k)))
            .map(|(j, k)| self.values[self.fixed + j * self.group + k])
            .collect();
        Args {
            values,
            fixed: 0,
            group: fields.len(),
            jobs: jobs.len(),
        }
    }

    /// The arguments of a call of another verb whose fixed arguments are the numbers `fixed` and
    /// which has no group (SETTLE's CLAIM).
    pub fn numbers(fixed: &[i64]) -> Args<'a> {
        Args {
            values: fixed.iter().map(|&n| Value::Number(n)).collect(),
            fixed: fixed.len(),
            group: 0,
            jobs: 0,
        }
    }

    /// The ids of every job (argument 0 of each group).
    pub fn ids(&self) -> Vec<Str<'a>> {
        (0..self.jobs).map(|j| self.job_bytes(j, 0)).collect()
    }
}

/// One job a CLAIM hands out.
pub struct Claimed<'a> {
    /// Its id.
    pub id: Owned<'a>,
    /// Its payload (missing only if the row lost its field).
    pub payload: Option<Owned<'a>>,
    /// Its attempts, this claim included.
    pub attempts: i64,
    /// The lease token of this claim.
    pub token: i64,
    /// The options it was admitted with (empty when none).
    pub opts: Option<Owned<'a>>,
}

/// What a handler answers.
pub enum Reply<'a> {
    /// An integer.
    Int(i64),
    /// An array of integers (CANCEL's statuses).
    Ints(Vec<i64>),
    /// CLAIM's `[next_ms, job…]` (each job one bulk string: [`answer_jobs`]).
    Claimed {
        next_ms: i64,
        jobs: Vec<Claimed<'a>>,
    },
    /// SETTLE's `[next_ms, [status…], job…]` (each job as CLAIM's).
    Settled {
        next_ms: i64,
        statuses: Vec<i64>,
        jobs: Vec<Claimed<'a>>,
    },
    /// An admission of which a job carried a `dedup` key: `[admitted, (place, holder, outcome)…]`.
    Admitted {
        admitted: i64,
        folded: Vec<crate::verbs::admit::Fold<'a>>,
    },
    /// OUTBOX's `[token, entry]…`: the entries leased, all under one token.
    Leased { token: i64, entries: Vec<Owned<'a>> },
    /// CLAIM found nothing and may wait: block on `key` until `timeout_ms` from now.
    Wait {
        key: Owned<'a>,
        timeout_ms: i64,
        next_ms: i64,
    },
}

/// Runs verb `index` of [`VERBS`] on one call's argv.
fn dispatch<'a>(ctx: Ctx<'a>, argv: &'a [Str<'a>], index: usize) {
    if ctx.keys_request() {
        // getkeys callback: declare argv[2] when numkeys is 1; else no key (the call fails at shape).
        if argv.len() >= 3 && argv[1].bytes() == b"1" {
            ctx.key_at(2);
        }
        return;
    }
    match run(ctx, argv, index, false) {
        Ok(Reply::Wait {
            key,
            timeout_ms,
            next_ms: _,
        }) => {
            let deadline = ffi::now_ms() + timeout_ms;
            ctx.block_on_key(
                key.as_str(),
                timeout_ms,
                move |ctx, argv| serve_blocked(ctx, argv, index, deadline),
                blocked_timeout,
            );
        }
        Ok(reply) => answer(ctx, reply),
        Err(refusal) => ctx.reply_error(&refusal.text(&VERBS[index].verb)),
    }
}

/// Steps 1–4 of verb `index` on `argv`, then its handler on the queue's [`Scope`]; `serving`: a
/// blocked client being served, which must not block again.
fn run<'a>(
    ctx: Ctx<'a>,
    argv: &'a [Str<'a>],
    index: usize,
    serving: bool,
) -> Result<Reply<'a>, Refusal> {
    let command = &VERBS[index];
    let (q, args) = steps(ctx, argv, &command.verb)?;
    let mut scope = Scope::new(ctx, q, argv[2], serving);
    (command.run)(&mut scope, &args)
}

/// A blocked CLAIM's key was signalled: run it again without waiting. Served (and unblocked) when
/// it claimed jobs, refused, or learned that something falls due before the block's `deadline`;
/// else it keeps waiting.
fn serve_blocked<'a>(ctx: Ctx<'a>, argv: &'a [Str<'a>], index: usize, deadline: i64) -> bool {
    match run(ctx, argv, index, true) {
        Ok(Reply::Claimed { next_ms, jobs })
            if jobs.is_empty() && (next_ms == 0 || next_ms >= deadline) =>
        {
            false
        }
        Ok(reply) => {
            answer(ctx, reply);
            true
        }
        Err(refusal) => {
            ctx.reply_error(&refusal.text(&VERBS[index].verb));
            true
        }
    }
}

/// A blocked CLAIM's time ran out: an empty claim (`next_ms` 0); the worker asks again.
fn blocked_timeout(ctx: Ctx) {
    answer(
        ctx,
        Reply::Claimed {
            next_ms: 0,
            jobs: Vec::new(),
        },
    );
}

fn answer(ctx: Ctx, reply: Reply) {
    match reply {
        Reply::Int(n) => ctx.reply_int(n),
        Reply::Ints(ns) => {
            ctx.reply_array(ns.len());
            for n in ns {
                ctx.reply_int(n);
            }
        }
        Reply::Admitted { admitted, folded } => crate::verbs::admit::answer(ctx, admitted, &folded),
        Reply::Claimed { next_ms, jobs } => {
            ctx.reply_array(1 + jobs.len());
            ctx.reply_int(next_ms);
            answer_jobs(ctx, jobs);
        }
        Reply::Settled {
            next_ms,
            statuses,
            jobs,
        } => {
            ctx.reply_array(2 + jobs.len());
            ctx.reply_int(next_ms);
            ctx.reply_array(statuses.len());
            for status in statuses {
                ctx.reply_int(status);
            }
            answer_jobs(ctx, jobs);
        }
        Reply::Leased { token, entries } => {
            ctx.reply_array(2 * entries.len());
            for e in entries {
                ctx.reply_int(token);
                ctx.reply_str(e.as_str());
            }
        }
        Reply::Wait { next_ms, .. } => {
            ctx.reply_array(1);
            ctx.reply_int(next_ms);
        }
    }
}

/// Claimed jobs (CLAIM's and SETTLE's), each one bulk string (wire 12):
/// `<attempts> <token> <id_len> <opts_len> <payload_len>\n<id><opts><payload>`, `payload_len` -1
/// when the row has no payload. One element per job, not five: a client builds a value per element.
fn answer_jobs(ctx: Ctx, jobs: Vec<Claimed>) {
    let mut entry = Vec::new();
    for job in jobs {
        let id = job.id.bytes();
        let opts = job.opts.as_ref().map_or(&[][..], |o| o.bytes());
        let payload = job.payload.as_ref().map(|p| p.bytes());
        entry.clear();
        let payload_len = payload.map_or(-1, |p| p.len() as i64);
        // (writing into a Vec cannot fail)
        let _ = writeln!(
            entry,
            "{} {} {} {} {}",
            job.attempts,
            job.token,
            id.len(),
            opts.len(),
            payload_len
        );
        entry.extend_from_slice(id);
        entry.extend_from_slice(opts);
        entry.extend_from_slice(payload.unwrap_or_default());
        ctx.reply_bytes(&entry);
    }
}

/// Steps 1–4, in order; the first failure is the reply.
fn steps<'a>(
    ctx: Ctx<'a>,
    argv: &'a [Str<'a>],
    verb: &Verb,
) -> Result<(Queue<'a>, Args<'a>), Refusal> {
    // 1. shape: numkeys is exactly 1 (byte for byte, as EVAL parses it), then the fixed
    // arguments and a whole number of groups, at most MAX_BATCH.
    if argv.len() < 3 || argv[1].bytes() != b"1" {
        return Err(Refusal::Arity);
    }
    let jobs = verb
        .groups(argv.len())
        .ok_or(Refusal::Arity)?
        .map_err(|()| Refusal::Batch(MAX_BATCH))?;
    // 2. layout: the declared key is the meta of a valid, non-empty queue name.
    let q = Queue::from_key(argv[2].bytes(), META).ok_or(Refusal::Layout)?;
    fence(ctx)?;
    Ok((q, gates(verb, &argv[3..], jobs)?))
}

/// Step 3: the node's `emq.wire` must be [`WIRE`]; on a standalone server the string key
/// `{emq}:version`, when present and readable by the caller, must be that number (a key of another type
/// counts as absent, as does one the caller's ACL hides; the refusal names a number, nothing else).
fn fence(ctx: Ctx) -> Result<(), Refusal> {
    let w = config::wire();
    if w != WIRE {
        return Err(Refusal::Fenced(w.to_string()));
    }
    if ctx.cluster_mode() {
        return Ok(());
    }
    let key = lit().fence_key;
    if !ctx.user().is_none_or(|u| u.may_read(key)) {
        return Ok(());
    }
    if let Some(k) = ctx.read(key) {
        if k.kind() == Kind::String && k.string() != WIRE.to_string().as_bytes() {
            return Err(Refusal::Fenced(fence_found(k.string())));
        }
    }
    Ok(())
}

/// Step 4: every argument through its gate: the fixed ones, then each group, in argument order.
fn gates<'a>(verb: &Verb, args: &'a [Str<'a>], jobs: usize) -> Result<Args<'a>, Refusal> {
    let specs = verb
        .args
        .iter()
        .chain((0..jobs).flat_map(|_| verb.group.iter()));
    let mut values = Vec::with_capacity(args.len());
    for (spec, &arg) in specs.zip(args) {
        let b = arg.bytes();
        values.push(match spec.gate {
            Gate::JobId if gates::job_id(b) => Value::Bytes(arg),
            Gate::JobId => return Err(Refusal::JobId),
            Gate::Name if keyspace::valid_name(b) => Value::Bytes(arg),
            Gate::Name => return Err(Refusal::Name(spec.name, MAX_NAME_BYTES)),
            Gate::Lane if b.is_empty() || keyspace::valid_name(b) => Value::Bytes(arg),
            Gate::Lane => return Err(Refusal::Name(spec.name, MAX_NAME_BYTES)),
            Gate::Number { min, max, digits } => {
                let n = gates::digits_up_to(b, digits).filter(|&n| n >= min);
                let n = n.ok_or_else(|| Refusal::number(spec.name, min))?;
                if let Some(max) = max.filter(|&max| n > max) {
                    return Err(Refusal::TooLarge(spec.name, max));
                }
                Value::Number(n as i64)
            }
            Gate::Options => {
                options::parse(b)?;
                Value::Bytes(arg)
            }
            Gate::Bytes { refusal, limit } => {
                let limit = match limit {
                    Limit::Fixed(n) => n,
                    Limit::MaxPayload => config::max_payload(),
                };
                if b.len() as i64 > limit {
                    return Err(refusal(limit));
                }
                Value::Bytes(arg)
            }
        });
    }
    Ok(Args {
        values,
        fixed: verb.args.len(),
        group: verb.group.len(),
        jobs,
    })
}
