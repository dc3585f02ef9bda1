/*
 * Lockstep's container protocol as compare-and-swap transitions of one lock record (issue 15).
 * The transitions mirror src/core/lockRecord.ts; test/unit/modelReplay.test.ts replays spin's
 * random simulations of this file against those TypeScript functions, step by step.
 *
 * Actors: N clones (acquire, heartbeat, petition, withdraw, lease-ids, next-id, push to the protected
 * branch, release after that landing; each may crash at any step, MAXCRASH crashes in all), one
 * operator (clears a HOLDER SILENT lock), and a clock. The server guard decides at landing.
 *
 * Time. Every timestamp is kept relative to the present, which is always NOW: a tick subtracts one
 * from every timestamp in the record, in every clone's snapshot and in every clone's own idea of its
 * expiry, and stops at 0 ("long ago"). NOW is at least the 24 h cap and at least N windows, so a
 * timestamp at 0 decides exactly like any older one. One tick is 8 hours: TTL = 2 ticks (16 h),
 * the handover window = 1 tick (8 h), the cap = 3 ticks (24 h).
 *
 * Compare-and-swap. A clone reads the record into its snapshot (one step), the clock may tick and
 * others may write, then it decides on its snapshot and writes only if the record still equals the
 * snapshot (one atomic step). Equal content decides equally (the transitions are pure functions of
 * the record and the time), so a content comparison is the revision check of the drivers.
 *
 * Mutations (the suite shows spin finds a counterexample for each):
 *   -DNOCAS        the write does not compare: a clone writes what it decided on a stale snapshot
 *   -DHB_EXPIRED   heartbeat accepts the holder's own grant after its expiry (revives a lapsed lease)
 *   -DRETIRE_IDS   a grant's end drops its ranges without returning their unminted identifiers (lost)
 *
 * Properties: assertions (safety) and the LTL claim `waiting` (liveness under weak fairness).
 */

#define N 3          /* clones */
#ifdef NOCAS
#define SPLIT
#endif
#ifndef MAXG
#define MAXG 4       /* grants issued at most (the bound of the exhaustive check) */
#endif
#ifndef MAXCRASH
#define MAXCRASH 2
#endif
#ifndef MAXID
#define MAXID 2      /* identifiers 1..MAXID */
#endif
#define TTL 2
#define W 1
#define CAP 3
#define NOW 3
#define NONE 255
#define OPERATOR (N + 1)

/* operations */
#define ACQ 1
#define HB 2
#define PET 3
#define WD 4
#define LEASE 5
#define MINT 6
#define REL 7
#define CLR 8
#define PUSH 9

typedef Rec {
  byte grant;      /* last grant issued */
  byte holder;     /* 0: none, else clone 1..N */
  byte hgrant;     /* the holder's grant */
  byte gat;        /* the holder's grant time */
  byte exp;        /* the holder's expiry */
  byte rel;        /* releasedAt, NONE when null */
  byte q[N];       /* petitions, in order */
  byte qlen;
  byte nextId;     /* the next identifier never handed out */
  byte pool;       /* bit i: identifier i returned to the pool */
  byte rid[N + 1]; /* clone c's leased identifier under the current grant (0: none) */
  bool rleft[N + 1]; /* that identifier is not minted yet */
}

Rec rec;
#ifdef SPLIT
Rec snap[N + 2];
#define wipeSnap(c) wipe(snap[c])
#else
#define wipeSnap(c) skip
#endif

/* each clone's own view (what its process knows) */
byte mine[N + 2];     /* the grant it believes it holds, 0: none */
byte myexp[N + 1];    /* its idea of its lease's expiry */
byte landed[N + 1];   /* the grant its last accepted landing carried */
byte crashes;

/* ghosts, for the properties */
byte issued;          /* bit g: grant g was issued */
byte lapsed;          /* bit g: the lease of grant g was seen past its expiry */
byte minted;          /* bit i: identifier i was minted */
bool ok;              /* scratch: the outcome of the step being taken (false between steps) */
bool may1;            /* ghost: clone 1 may acquire now (its window has come, or anyone may) */

#define live (rec.holder != 0 && rec.exp > NOW)
#define believes(c) (mine[c] != 0 && myexp[c] > NOW)
#define inq1 (rec.q[0] == 1 || rec.q[1] == 1 || rec.q[2] == 1)

inline same(a, b) {
  ok = (a.grant == b.grant && a.holder == b.holder && a.hgrant == b.hgrant && a.gat == b.gat && a.exp == b.exp
    && a.rel == b.rel && a.q[0] == b.q[0] && a.q[1] == b.q[1] && a.q[2] == b.q[2] && a.qlen == b.qlen
    && a.nextId == b.nextId && a.pool == b.pool && a.rid[1] == b.rid[1] && a.rid[2] == b.rid[2] && a.rid[3] == b.rid[3]
    && a.rleft[1] == b.rleft[1] && a.rleft[2] == b.rleft[2] && a.rleft[3] == b.rleft[3])
}

inline copy(a, b) { /* a := b */
  a.grant = b.grant; a.holder = b.holder; a.hgrant = b.hgrant; a.gat = b.gat; a.exp = b.exp; a.rel = b.rel;
  a.q[0] = b.q[0]; a.q[1] = b.q[1]; a.q[2] = b.q[2]; a.qlen = b.qlen; a.nextId = b.nextId; a.pool = b.pool;
  a.rid[1] = b.rid[1]; a.rid[2] = b.rid[2]; a.rid[3] = b.rid[3];
  a.rleft[1] = b.rleft[1]; a.rleft[2] = b.rleft[2]; a.rleft[3] = b.rleft[3]
}

inline older(t) { if :: t != NONE && t > 0 -> t-- :: else -> skip fi }
inline shift(r) { older(r.gat); older(r.exp); older(r.rel) }

inline wipe(r) {
  r.grant = 0; r.holder = 0; r.hgrant = 0; r.gat = 0; r.exp = 0; r.rel = 0; r.q[0] = 0; r.q[1] = 0; r.q[2] = 0;
  r.qlen = 0; r.nextId = 0; r.pool = 0; r.rid[1] = 0; r.rid[2] = 0; r.rid[3] = 0;
  r.rleft[1] = 0; r.rleft[2] = 0; r.rleft[3] = 0
}

/* turnAt/mayAcquire of lockRecord.ts, for clone c on record r: ok = may acquire */
byte sa, pa, ka;      /* scratch of mayAcquire and dequeue, always 0 between steps */
inline mayAcquire(r, c) {
  if
  :: r.holder != 0 && r.exp > NOW -> ok = false
  :: else ->
     sa = (r.holder != 0 -> r.exp : r.rel);
     if
     :: sa == NONE || r.qlen == 0 -> ok = true
     :: else ->
        pa = (NOW - sa) / W;
        if
        :: pa >= r.qlen -> ok = true
        :: else ->
           ok = false; ka = 0;
           do
           :: ka <= pa -> if :: r.q[ka] == c -> ok = true :: else -> skip fi; ka++
           :: else -> break
           od
        fi
     fi
  fi;
  sa = 0; pa = 0; ka = 0
}

inline dequeue(r, c) {
  sa = 0; pa = 0;
  do
  :: sa < r.qlen -> if :: r.q[sa] != c -> r.q[pa] = r.q[sa]; pa++ :: else -> skip fi; sa++
  :: else -> break
  od;
  r.qlen = pa;
  do
  :: pa < N -> r.q[pa] = 0; pa++
  :: else -> break
  od;
  sa = 0; pa = 0
}

/* Identifier i is not lost: never handed out (at or above nextId), minted, back in the pool, or leased and
   not yet minted under the current grant. A grant's end (release, clear, takeover) returns its unminted ones. */
#define inRange(i) ((rec.rid[1] == i && rec.rleft[1]) || (rec.rid[2] == i && rec.rleft[2]) || (rec.rid[3] == i && rec.rleft[3]))
#define accounted(i) (i >= rec.nextId || (minted & (1 << i)) != 0 || (rec.pool & (1 << i)) != 0 || inRange(i))

/* The properties that must hold in every state. */
inline check() {
  assert(rec.holder == 0 || rec.hgrant == rec.grant);                 /* the holder's grant is the current one */
  assert(rec.holder == 0 || rec.exp <= rec.gat + CAP);               /* never past the 24 h cap */
  assert(!live || (lapsed & (1 << rec.hgrant)) == 0);                /* a lapsed lease is never live again */
  assert(believes(1) + believes(2) + believes(3) <= 1);              /* never two live holders */
  assert(accounted(1) && accounted(2) && accounted(3));             /* no identifier lost */
  if :: rec.holder != 0 && rec.exp <= NOW -> lapsed = lapsed | (1 << rec.hgrant) :: else -> skip fi;
  mayAcquire(rec, 1); may1 = ok; ok = false
}

inline clearRanges(r) { r.rid[1] = 0; r.rid[2] = 0; r.rid[3] = 0; r.rleft[1] = 0; r.rleft[2] = 0; r.rleft[3] = 0 }

/* A grant ends (release, clear, takeover of a silent holder): the identifiers its ranges leased and nobody
   minted go back to the pool, then the ranges go. */
inline endRanges(r) {
#ifndef RETIRE_IDS
  if :: r.rid[1] != 0 && r.rleft[1] -> r.pool = r.pool | (1 << r.rid[1]) :: else -> skip fi;
  if :: r.rid[2] != 0 && r.rleft[2] -> r.pool = r.pool | (1 << r.rid[2]) :: else -> skip fi;
  if :: r.rid[3] != 0 && r.rleft[3] -> r.pool = r.pool | (1 << r.rid[3]) :: else -> skip fi;
#endif
  clearRanges(r)
}

/* holds(): clone c presenting grant g is the live holder */
#define holds(r, c, g) (r.holder == c && r.hgrant == g && r.grant == g && r.exp > NOW)

inline printState() {
  printf("= %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d\n", rec.grant, rec.holder, rec.hgrant, rec.gat, rec.exp, rec.rel,
    rec.qlen, rec.q[0], rec.q[1], rec.q[2], rec.nextId, rec.pool, rec.rid[1], rec.rid[2], rec.rid[3],
    rec.rleft[1] + 2 * rec.rleft[2] + 4 * rec.rleft[3], NOW)
}

/* The transition of `op` by clone c with argument arg, decided on rec itself (the caller made rec what it
   decides on). Sets ok, and res (the grant acquired, the expiry extended to, …). */
inline transition(c, op, arg, res) {
  res = 0;
  if
  :: op == ACQ ->
     mayAcquire(rec, c);
     if
     :: ok && rec.grant < MAXG ->
        rec.grant++; assert((issued & (1 << rec.grant)) == 0); issued = issued | (1 << rec.grant);
        rec.holder = c; rec.hgrant = rec.grant; rec.gat = NOW; rec.exp = NOW + TTL; rec.rel = NONE;
        dequeue(rec, c); endRanges(rec); res = rec.grant
     :: ok && rec.grant >= MAXG -> ok = false  /* the bound of the check, not a refusal of the protocol */
     :: else -> skip
     fi
  :: op == HB ->
#ifdef HB_EXPIRED
     ok = (rec.holder == c && rec.hgrant == arg && rec.grant == arg);
#else
     ok = holds(rec, c, arg);
#endif
     if
     :: ok ->
        res = (NOW + TTL < rec.gat + CAP -> NOW + TTL : rec.gat + CAP);
        if :: res < rec.exp -> res = rec.exp :: else -> skip fi;
        rec.exp = res
     :: else -> skip
     fi
  :: op == PET ->
     ok = !(rec.holder == c && rec.exp > NOW) && rec.q[0] != c && rec.q[1] != c && rec.q[2] != c;
     if :: ok -> rec.q[rec.qlen] = c; rec.qlen++ :: else -> skip fi
  :: op == WD ->
     ok = (rec.q[0] == c || rec.q[1] == c || rec.q[2] == c);
     if :: ok -> dequeue(rec, c) :: else -> skip fi
  :: op == LEASE -> /* one identifier to clone arg: the pool's lowest first, else a new one */
     ok = holds(rec, c, mine[c]);
     if
     :: ok ->
        if
        :: rec.pool & 2 -> res = 1
        :: else -> if :: rec.pool & 4 -> res = 2 :: else -> if :: rec.pool & 8 -> res = 3 :: else -> res = rec.nextId fi fi
        fi;
        if
        :: res <= MAXID && rec.rid[arg] == 0 ->
           if :: res == rec.nextId -> rec.nextId++ :: else -> rec.pool = rec.pool & ~(1 << res) fi;
           rec.rid[arg] = res; rec.rleft[arg] = true
        :: else -> ok = false /* the bound of the check: MAXID identifiers, one range per clone and grant */
        fi
     :: else -> skip
     fi
  :: op == MINT ->
     if
     :: holds(rec, c, mine[c]) -> /* the lead mints from the pool or above everything handed out */
        if
        :: rec.pool & 2 -> res = 1
        :: else -> if :: rec.pool & 4 -> res = 2 :: else -> if :: rec.pool & 8 -> res = 3 :: else -> res = rec.nextId fi fi
        fi;
        ok = res <= MAXID;
        if
        :: ok -> if :: res == rec.nextId -> rec.nextId++ :: else -> rec.pool = rec.pool & ~(1 << res) fi
        :: else -> skip
        fi
     :: else -> /* a lessee mints from its own range under the current grant */
        ok = rec.rid[c] != 0 && rec.rleft[c];
        if :: ok -> res = rec.rid[c]; rec.rleft[c] = false :: else -> skip fi
     fi;
     if :: ok -> assert((minted & (1 << res)) == 0); minted = minted | (1 << res) :: else -> skip fi
  :: op == REL ->
     ok = holds(rec, c, arg) && landed[c] == arg;
     if
     :: ok ->
        res = rec.hgrant;
        rec.holder = 0; rec.hgrant = 0; rec.gat = 0; rec.exp = 0; rec.rel = NOW; endRanges(rec)
     :: else -> skip
     fi
  :: op == CLR ->
     ok = rec.holder != 0 && rec.exp <= NOW;
     if
     :: ok -> res = rec.hgrant; rec.holder = 0; rec.hgrant = 0; rec.gat = 0; rec.exp = 0; rec.rel = NOW; endRanges(rec)
     :: else -> skip
     fi
  fi
}

/* One write: decide on the snapshot and store it if the record is still the snapshot. cas = whether it was stored. */
inline write(c, op, arg, res, cas) {
#ifdef SPLIT
  same(rec, snap[c]);
  cas = ok;
#else
  cas = true;
#endif
#ifdef NOCAS
  cas = true;
  copy(rec, snap[c]);
#endif
  if
  :: cas ->
     transition(c, op, arg, res);
     printf("@ %d %d %d %d %d %d\n", c, op, arg, mine[c], ok, res);
     printState()
  :: else -> ok = false
  fi;
  wipeSnap(c)
}

inline crash(c) {
  mine[c] = 0; myexp[c] = 0; landed[c] = 0; wipeSnap(c); crashes++
}

proctype Clone(byte c) {
  byte op, arg, res;
  bool cas;
idle:
  atomic {
    if
    :: mine[c] == 0 -> op = ACQ
    :: mine[c] != 0 -> op = HB; arg = mine[c] /* also late: the store decides */
    :: op = PET
    :: op = WD
#ifndef NOIDS
    :: believes(c) -> op = LEASE; if :: c != 1 -> arg = 1 :: c != 2 -> arg = 2 :: c != 3 -> arg = 3 fi
    :: op = MINT
#endif
    :: believes(c) -> op = PUSH
    :: mine[c] != 0 && landed[c] == mine[c] -> op = REL; arg = mine[c]
    :: crashes < MAXCRASH -> crash(c); check(); goto idle
    fi;
#ifdef SPLIT
    if :: op != PUSH -> copy(snap[c], rec) :: else -> skip fi
  };
  if
  :: crashes < MAXCRASH -> atomic { crash(c); check(); op = 0; arg = 0 }; goto idle
  :: skip
  fi;
  atomic {
#endif
    if
    :: op == PUSH -> /* a push to the protected branch: the server guard decides with the record as it is */
       printf("@ %d %d 0 %d %d 0\n", c, PUSH, mine[c], holds(rec, c, mine[c]));
       printState();
       if
       :: holds(rec, c, mine[c]) ->
          assert(mine[c] == rec.grant);                    /* a landing carries the current grant */
          assert((lapsed & (1 << mine[c])) == 0);          /* … of a lease that never lapsed */
          landed[c] = mine[c]
       :: else -> skip
       fi
    :: else ->
       write(c, op, arg, res, cas);
       if
       :: cas && crashes < MAXCRASH -> crash(c) /* stored, but the clone died before it learnt so */
       :: cas && ok && op == ACQ -> mine[c] = res; myexp[c] = rec.exp; landed[c] = 0
       :: cas && ok && op == HB -> myexp[c] = res
       :: cas && !ok && (op == HB || op == REL) && arg == mine[c] && !holds(rec, c, arg) -> mine[c] = 0; myexp[c] = 0 /* the lease is lost */
       :: cas && ok && op == REL -> mine[c] = 0; myexp[c] = 0; landed[c] = 0
       :: else -> skip
       fi
    fi;
    check();
    op = 0; arg = 0; res = 0; cas = false
  };
  goto idle
}

proctype Operator() {
  byte res;
  bool cas;
  do
  ::
#ifdef SPLIT
     atomic { copy(snap[OPERATOR], rec) };
#endif
     atomic { write(OPERATOR, CLR, 0, res, cas); res = 0; cas = false; check() }
  od
}

proctype Clock() {
  do
  :: atomic {
       printf("@ 0 0 0 0 0 0\n"); /* a tick */
       shift(rec);
#ifdef SPLIT
       shift(snap[1]); shift(snap[2]); shift(snap[3]); shift(snap[4]);
#endif
       if :: myexp[1] > 0 -> myexp[1]-- :: else -> skip fi;
       if :: myexp[2] > 0 -> myexp[2]-- :: else -> skip fi;
       if :: myexp[3] > 0 -> myexp[3]-- :: else -> skip fi;
       printState();
       check()
     }
  od
}

init {
  atomic {
    rec.rel = NONE; rec.nextId = 1;
    printf("# %d %d %d %d %d %d %d\n", N, MAXG, MAXID, TTL, W, CAP, NOW);
    printState();
    run Clock(); run Operator(); run Clone(1); run Clone(2); run Clone(3)
  }
}

/* Liveness: a clone waiting in the queue eventually may acquire (its window has come), or has left the queue. */
ltl waiting { [] (inq1 -> <> (!inq1 || may1)) }
