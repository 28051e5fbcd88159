//! Step 5's door to the keys a verb derives from the queue name (every key but the declared
//! `meta`): each is opened only after the caller's ACL user may access it (the server checks
//! declared keys itself; these it does not), type-checked, and, in a cluster, remembered when
//! missing, so that one probe before the first write refuses with TRYAGAIN when the queue's slot is
//! being migrated and such a key may live on the other node.

use crate::ffi::{Ctx, Key, Kind, Owned, Str, User};
use crate::keyspace::{self, Queue};
use crate::wire::Refusal;

/// One call's access to its queue's derived keys: what the dispatcher hands every handler.
pub struct Scope<'a> {
    /// The call's context.
    pub ctx: Ctx<'a>,
    q: Queue<'a>,
    meta: Str<'a>,
    serving: bool,
    user: Option<Option<User<'a>>>,
    cluster: bool,
    missing: Vec<Vec<u8>>,
    now: std::cell::Cell<Option<i64>>,
}

impl<'a> Scope<'a> {
    /// The scope of a call on queue `q`, whose declared key is `meta`; `serving`: a blocked client
    /// being served, which must not block again.
    pub fn new(ctx: Ctx<'a>, q: Queue<'a>, meta: Str<'a>, serving: bool) -> Scope<'a> {
        Scope {
            ctx,
            q,
            meta,
            serving,
            user: None,
            cluster: ctx.cluster_mode(),
            missing: Vec::new(),
            now: std::cell::Cell::new(None),
        }
    }

    /// A scope on the same call and queue that remembers no missing key yet (its own probe), at
    /// the same now: SETTLE's CLAIM, after its settlements.
    pub fn fresh(&self) -> Scope<'a> {
        Scope {
            ctx: self.ctx,
            q: self.q,
            meta: self.meta,
            serving: self.serving,
            user: None,
            cluster: self.cluster,
            missing: Vec::new(),
            now: std::cell::Cell::new(self.now.get()),
        }
    }

    /// The server's time, read once per call: the checks of step 5 and the writes of step 6 (a
    /// lane's park against now) see the same ms.
    pub fn now(&self) -> i64 {
        let now = self.now.get().unwrap_or_else(crate::ffi::now_ms);
        self.now.set(Some(now));
        now
    }

    /// Whether the call may wait on a key (not a served blocked client, not in MULTI or a script).
    pub fn may_block(&self) -> bool {
        !self.serving && self.ctx.may_block()
    }

    /// The queue's name.
    pub fn queue(&self) -> &'a [u8] {
        self.q.name()
    }

    /// The name of the queue's key of type `ty`.
    pub fn name(&self, ty: &[u8]) -> Owned<'a> {
        self.ctx.string(&self.q.key(ty))
    }

    /// The name of the hash of scheduler `name`.
    pub fn scheduler(&self, name: &[u8]) -> Owned<'a> {
        self.ctx.string(&self.q.scheduler(name))
    }

    /// The name of lane `lane`'s ready list at priority `p` (`pending` for the default lane at 0).
    pub fn ready(&self, lane: &[u8], p: u64) -> Owned<'a> {
        self.ctx.string(&self.q.ready(lane, p))
    }

    /// The name of lane `lane`'s priority levels (`levels:<lane>`).
    pub fn levels(&self, lane: &[u8]) -> Owned<'a> {
        self.ctx.string(&self.q.levels(lane))
    }

    /// The name of lane `lane`'s state hash (`lane:<lane>`).
    pub fn lane(&self, lane: &[u8]) -> Owned<'a> {
        self.ctx.string(&self.q.lane(lane))
    }

    /// The name of the row of `id`.
    pub fn row(&self, id: &[u8]) -> Owned<'a> {
        self.ctx.string(&self.q.job(id))
    }

    /// The name of the row of an id popped from a list or set (`base + job: + id`).
    pub fn row_of(&self, id: &[u8]) -> Owned<'a> {
        self.ctx.string(&keyspace::row_of(&self.q.base(), id))
    }

    /// Step 5: the rows of `ids`, each a hash or missing (a missing one remembered), by place, and
    /// whether each exists (the twin of the prelude's `emq_rows`).
    pub fn rows<'i>(
        &mut self,
        ids: impl IntoIterator<Item = &'i [u8]>,
    ) -> Result<(Vec<Owned<'a>>, Vec<bool>), Refusal> {
        let (mut rows, mut exists) = (Vec::new(), Vec::new());
        for id in ids {
            let row = self.row_of(id);
            exists.push(self.expect(row.as_str(), Kind::Hash)?.kind() == Kind::Hash);
            rows.push(row);
        }
        Ok((rows, exists))
    }

    /// Opens the declared `meta` (no ACL check: the server made it) and checks it is a hash or
    /// missing.
    pub fn meta(&self) -> Result<Key<'a, 'a>, Refusal> {
        let key = self.ctx.open(self.meta);
        if key.is_empty_or(Kind::Hash) {
            Ok(key)
        } else {
            Err(Refusal::Wrongtype)
        }
    }

    /// Opens a derived key once the caller's ACL user may access it.
    pub fn open<'k>(&mut self, name: Str<'k>) -> Result<Key<'a, 'k>, Refusal> {
        self.check(name)?;
        Ok(self.ctx.open(name))
    }

    /// Opens the derived key `name` once the caller's ACL user may access it, the key owning its
    /// name; it must be missing (not remembered) or of `kind`.
    pub fn open_owned(&mut self, name: Owned<'a>, kind: Kind) -> Result<Key<'a, 'a>, Refusal> {
        self.check(name.as_str())?;
        let key = self.ctx.open_named(name);
        if key.is_empty_or(kind) {
            Ok(key)
        } else {
            Err(Refusal::Wrongtype)
        }
    }

    /// Opens a derived key that must be missing or of `kind`; a missing one is remembered.
    pub fn expect<'k>(&mut self, name: Str<'k>, kind: Kind) -> Result<Key<'a, 'k>, Refusal> {
        let key = self.open(name)?;
        self.typed(key, kind)
    }

    /// Refuses a derived key the caller's ACL user may not access.
    fn check(&mut self, name: Str) -> Result<(), Refusal> {
        let ctx = self.ctx;
        match self.user.get_or_insert_with(|| ctx.user()) {
            Some(u) if !u.may_access(name) => Err(Refusal::Noperm),
            _ => Ok(()),
        }
    }

    /// `key`, when missing (remembered) or of `kind`.
    fn typed<'k>(&mut self, key: Key<'a, 'k>, kind: Kind) -> Result<Key<'a, 'k>, Refusal> {
        match key.kind() {
            Kind::Empty => self.absent(key.name()),
            k if k == kind => {}
            _ => return Err(Refusal::Wrongtype),
        }
        Ok(key)
    }

    /// Opens the queue's structure of type `ty` (`pending`, `active`, …), which must be missing or
    /// of `kind`: the key owns its name, so it can be handed back from a shared step.
    pub fn structure(&mut self, ty: &[u8], kind: Kind) -> Result<Key<'a, 'a>, Refusal> {
        self.expect_owned(self.name(ty), kind)
    }

    /// [`expect`](Self::expect) with the key owning its name: a key step 6 may use again.
    pub fn expect_owned(&mut self, name: Owned<'a>, kind: Kind) -> Result<Key<'a, 'a>, Refusal> {
        self.check(name.as_str())?;
        let key = self.ctx.open_named(name);
        self.typed(key, kind)
    }

    /// Remembers a key the verb needs that is missing here.
    pub fn absent(&mut self, name: Str) {
        if self.cluster {
            self.missing.push(name.bytes().to_vec());
        }
    }

    /// Cluster: refuses with TRYAGAIN when a remembered missing key may be on the other node of a
    /// slot migration (the server's own check, as a dry run). Called once, before the first write.
    pub fn probe(&self) -> Result<(), Refusal> {
        if !self.cluster || self.missing.is_empty() {
            return Ok(());
        }
        let names: Vec<Owned> = self.missing.iter().map(|m| self.ctx.string(m)).collect();
        let strs: Vec<Str> = names.iter().map(Owned::as_str).collect();
        if self.ctx.all_local(self.meta, &strs) {
            Ok(())
        } else {
            Err(Refusal::Migrating)
        }
    }
}
