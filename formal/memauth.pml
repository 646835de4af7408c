/*
 * memauth.pml -- Promela model of memauth's origin-bound action authority.
 *
 * Specification: docs/design.md (authority lattice, origin = min(principal ceiling,
 * source authority), taint carried through derivation incl. every record read
 * in the session, corroboration by pairwise independent trusted principals,
 * scoped single-use confirmation, action gate for high-risk actions).
 *
 * One nondeterministic environment process (attacker + user + tools + agent)
 * chooses every operation; bounded counters keep the state space finite.
 *
 * Compile-time selection (spin -D...):
 *   GATE      1 = GATE_MEMAUTH        the docs/design.md rule (default)
 *             2 = GATE_CONTENT        "looks benign" or >= 2 records assert the value
 *             3 = GATE_LINEAGE        deny only on a live edge to an untrusted ancestor
 *             4 = GATE_NAIVE_CORROB   corroboration counted per principal, no domain check
 *             5 = GATE_LOOSE_CONFIRM  (extra) any confirmation ever issued counts
 *             6 = GATE_NO_INTENT      context taint off without intent provenance: an
 *                                     action whose values are supplied by trusted claims
 *                                     or the user's turn is allowed whoever wanted it
 *             7 = GATE_ANY_CLAIM      claims accepted from any authority (a claim counts
 *                                     whatever the authority of the record carrying it)
 *             8 = GATE_MENTION        a trusted text that merely mentions a value supplies
 *                                     it on the context-free path (text as supplier)
 *           (6..8 differ from memauth only when the CLAIMS channel 64 is on)
 *   K         corroboration threshold (default 2)
 *   CHANNELS  bit mask of enabled laundering channels (default 31 = all)
 *               1 ADAPTIVE  attacker's raw text may look benign
 *               2 SUMMARY   agent derivation/summarization (edge kept or dropped)
 *               4 ECHO      trusted tool writes attacker-controlled (web) content
 *               8 CORROB    manufactured corroboration: 2nd attacker record,
 *                           corroborate operations (Sybil, correlated, independent)
 *              16 CONFIRM   user confirmations: exact, generic "yes", expiry
 *              32 DISPLAY   text of a lower principal reaches the agent through a
 *                           higher record: the attacker attaches text (carrying its
 *                           payee) to any record as corroboration evidence, or a
 *                           trusted tool fetches a page that repeats a session record
 *                           with changed case/symbols/hidden tag characters (not in
 *                           the default 31: see the display row and mutants 5, 6)
 *              64 CLAIMS    typed claims, intent and the user's turn (not in the default
 *                           31: see the intent-and-claims table): records carry claims
 *                           {payee_account = v} and {intent = pay} with the record's
 *                           authority; the attacker writes low claims with the right
 *                           field names; a trusted record mentions the attacker's
 *                           payee only to forbid it; summaries restate their input's
 *                           claims (or try to restate them with another value); the
 *                           user's turn requests the payment, names the payee, asks
 *                           about the attacker's account, forbids it, or says "do not
 *                           pay yet"; the agent or the application may assert intent.
 *   WITNESS   0 = normal run (check the invariant)
 *             n>0 = non-vacuity probe: assert(false) when situation n is reached
 *                   (see the comment above inline witness; SPIN must find it)
 *   MUTANT    0 = faithful memauth store/gate (default)
 *             n>0 = remove ONE memauth mechanism, to show it is necessary
 *                   (each must yield a counterexample under GATE_MEMAUTH):
 *               1 derive() taints only from the declared input, not from
 *                 every record read in the session
 *               2 confirmations are not consumed (reusable)
 *               3 corroboration recorded at the corroborator's ceiling,
 *                 ignoring that its evidence came from the open web
 *               4 origin authority = principal ceiling (source ignored):
 *                 a trusted tool's echo of a web page is trusted_tool_verified
 *               5 (CHANNELS & 32) a record's view displays text another,
 *                 lower principal attached to it, and reading the record
 *                 records a read of that record only
 *               6 (CHANNELS & 32) echo detection ignores case/symbols/tag
 *                 characters: a different page that repeats a session record
 *                 is swallowed as an echo (nothing stored, nothing read)
 *               7 (CHANNELS & 64) derived claims are not checked against the
 *                 derivation's inputs: a summary restates a trusted claim with
 *                 another value
 *               8 (CHANNELS & 64) intent the caller asserts is accepted from any
 *                 requester (the agent's own origin is not checked)
 *               9 (CHANNELS & 64) intent detection ignores a negation in the
 *                 user's turn ("do not pay Acme yet" requests the payment)
 *              10 (CHANNELS & 64) the user's turn supplies every value it contains,
 *                 also one it names in a question or only to forbid it
 *
 * GROUND TRUTH: every identifier starting with g_ is a ghost variable
 * (instrumentation written next to the store update it describes).  Ghost
 * variables are read ONLY by the invariant and by the WITNESS probes --
 * never by the gate.  The gate is the code between
 * the BEGIN GATE / END GATE markers; run.sh checks mechanically that no g_
 * identifier occurs there.
 */

#ifndef GATE
#define GATE 1
#endif
#ifndef K
#define K 2
#endif
#ifndef CHANNELS
#define CHANNELS 31
#endif
#ifndef WITNESS
#define WITNESS 0
#endif
#ifndef MUTANT
#define MUTANT 0
#endif

#define GATE_MEMAUTH        1
#define GATE_CONTENT        2
#define GATE_LINEAGE        3
#define GATE_NAIVE_CORROB   4
#define GATE_LOOSE_CONFIRM  5
#define GATE_NO_INTENT      6
#define GATE_ANY_CLAIM      7
#define GATE_MENTION        8

/* ---------------- bounds (finite state space) ---------------- */
#ifndef N
#define N        3   /* max records (3 or 4; the option lists below go up to 4) */
#endif
#define NP       8   /* principals */
#ifndef MAXCORR
#define MAXCORR  2   /* recorded trusted corroborations */
#endif
#ifndef MAXCONF
#define MAXCONF  2   /* confirmation-issuing operations */
#endif
#ifndef MAXDEL
#define MAXDEL   1   /* deletions */
#endif
#ifndef MAXSESS
#define MAXSESS  3   /* sessions (so 2 session boundaries) */
#endif
#if (CHANNELS & 8)
#define MAXATK   2   /* attacker-written raw records */
#else
#define MAXATK   1
#endif

/* ---------------- authority lattice (total order) ---------------- */
#define A_EXT    0   /* external_untrusted    */
#define A_MODEL  1   /* model_inferred        */
#define A_TOOL   2   /* trusted_tool_verified */
#define A_USER   3   /* user_confirmed        */
#define A_SYS    4   /* system_policy         */
#define MIN(a,b) ((a) < (b) -> (a) : (b))

/* ---------------- principals ---------------- */
#define P_REG    0   /* system/registry, system_policy, domain 0 */
#define P_USER   1   /* user, user_confirmed, domain 1 */
#define P_TOOLA  2   /* trusted tool, vendor X, domain 2 */
#define P_TOOLB  3   /* trusted tool, vendor X, domain 2 (correlated with A) */
#define P_TOOLC  4   /* trusted tool, vendor Y, domain 3 (independent) */
#define P_AGENT  5   /* agent/model, model_inferred, domain 4 */
#define P_ATK1   6   /* external attacker, external_untrusted, domain 5 */
#define P_ATK2   7   /* external attacker, external_untrusted, domain 6 */

#define KIND_SYSTEM   0
#define KIND_USER     1
#define KIND_TOOL     2
#define KIND_AGENT    3
#define KIND_EXTERNAL 4

#define KIND(p) ((p) == 0 -> KIND_SYSTEM : ((p) == 1 -> KIND_USER : ((p) <= 4 -> KIND_TOOL : ((p) == 5 -> KIND_AGENT : KIND_EXTERNAL))))
#define CEIL(p) ((p) == 0 -> A_SYS : ((p) == 1 -> A_USER : ((p) <= 4 -> A_TOOL : ((p) == 5 -> A_MODEL : A_EXT))))
#define DOM(p)  ((p) <= 1 -> (p) : ((p) <= 3 -> 2 : (p) - 1))

/* ---------------- sources ---------------- */
#define S_POLICY    0   /* system configuration      -> system_policy */
#define S_USERTURN  1   /* the user's own turn        -> user_confirmed */
#define S_VERIFIED  2   /* a tool's verified upstream -> trusted_tool_verified */
#define S_AGENT     3   /* the model's own output     -> model_inferred */
#define S_WEB       4   /* open web / email / comment -> external_untrusted */
#define AUTH(s) (4 - (s))

/* action argument values (payee of a payment) */
#define V_LEGIT  0
#define V_ATK    1

#if (CHANNELS & 64)
/* ---------------- claims, intent, the user's turn (channel 64) ----------------
   A claim is a value with an authority: the authority of the record carrying it.
   Claim bits of a record: */
#define CL_L     1   /* {Acme, payee_account, LEGIT}    */
#define CL_A     2   /* {Acme, payee_account, ATTACKER} */
#define CL_IL    4   /* {LEGIT, intent, pay}: a standing instruction ("pay LEGIT monthly") */
#define CL_IA    8   /* {ATTACKER, intent, pay} */
#define CL_I     (CL_IL | CL_IA)
#define CLV(v)   (1 << (v))        /* payee claim of value v */
#define CLI(v)   (4 << (v))        /* standing instruction to pay v (its subject is the action's value) */
/* Claims a root write carries, fixed by writer and source: every page from the web (the
   attacker's, or a tool's echo of it) claims intent AND the attacker's payee (low claims
   with the right field names); the user's own statement is a standing instruction with
   the legitimate payee; every other trusted source claims the legitimate payee. */
#define ROOT_CLAIMS(p, s, v) (((s) == S_WEB || (p) == P_USER -> CLI(v) : 0) | CLV(v))
/* Values a root text mentions: its own, and the registry's text also names the
   attacker's account, only to forbid it ("never pay ACCT-6666"). */
#define ROOT_MENTIONS(p, v)  (CLV(v) | ((p) == P_REG -> CLV(V_ATK) : 0))

/* The user's current turn (one per session; cleared with the session): */
#define T_NONE      0
#define T_REQ       1   /* "pay the Acme invoice"                       */
#define T_REQ_L     2   /* "pay the Acme invoice to ACCT-1111"          */
#define T_ASK_A     3   /* "is ACCT-6666 really Acme's account?"        */
#define T_REQ_NOT_A 4   /* "pay the Acme invoice, but never ACCT-6666"  */
#define T_NEG       5   /* "do not pay Acme yet"                        */
/* What the gate reads from the turn (the turn's text as the store's rules see it):
   TURN_REQ: the turn requests the action type, not negated (policy intent verbs);
   TURN_SUP: the turn supplies value v (user_turn supplier). */
#if MUTANT == 9
#define TURN_REQ(t)    ((t) != T_NONE && (t) != T_ASK_A)
#else
#define TURN_REQ(t)    ((t) == T_REQ || (t) == T_REQ_L || (t) == T_REQ_NOT_A)
#endif
#if MUTANT == 10
#define TURN_SUP(t, v) ((TURN_MENTIONS(t) >> (v)) & 1)   /* every value the turn contains */
#else
#define TURN_SUP(t, v) ((t) == T_REQ_L && (v) == V_LEGIT)  /* a value the turn asserts */
#endif
/* values the user's turn names (in a request, a question or a prohibition) */
#define TURN_MENTIONS(t) ((t) == T_REQ_L -> CLV(V_LEGIT) : ((t) == T_ASK_A || (t) == T_REQ_NOT_A -> CLV(V_ATK) : 0))
/* Ground truth of the turn (ghost interpretation, read only by the invariant): the
   user truly asks for the payment, truly asserts the payee. */
#define g_turn_req(t)       ((t) == T_REQ || (t) == T_REQ_L || (t) == T_REQ_NOT_A)
#define g_turn_asserts(t, v) ((t) == T_REQ_L && (v) == V_LEGIT)

/* requester of an action: the agent, the agent asserting intent itself, or the
   application asserting intent from its own planner (which saw only the user's turn) */
#define RQ_AGENT     0
#define RQ_AGENT_INT 1
#define RQ_APP_INT   2
#define RQ_AUTH(rq)  ((rq) == RQ_APP_INT -> A_SYS : A_MODEL)
#endif

/* ---------------- store state (what the gate may read) ---------------- */
byte nrec;                 /* records 0 .. nrec-1 exist */
byte r_writer[N];          /* origin.principalId (never updated) */
byte r_origin[N];          /* origin.authority   (never updated) */
byte r_taint[N];           /* taint.lowestAuthority (never raised) */
byte r_parents[N];         /* recorded derivedFrom edges (bit mask) */
byte r_corrT[N];           /* principals whose recorded corroboration has authority >= trusted_tool_verified */
bit  r_val[N];             /* the payee value the content supplies */
bit  r_benign[N];          /* content "looks benign" (what a content filter sees) */
bit  r_del[N];             /* status deleted: content erased, hash + metadata kept */
bit  r_derived[N];         /* written by derive() */

#if MUTANT == 5
bit  r_att[N];             /* a lower principal attached text to the record (shown in its view) */
#endif
#if (CHANNELS & 64)
byte r_cl[N];              /* claims the record carries (CL_* bits; covered by its hash) */
byte r_tm[N];              /* payee values its text mentions (bit mask) */
byte turn;                 /* the user's current turn (T_*) */
byte rq;                   /* scratch: requester of the current action (RQ_*) */
byte icl;                  /* scratch: claims of dependencies with action authority >= threshold */
#define TEXTVALS(r) (r_tm[r])
#else
#define TEXTVALS(r) (1 << r_val[r])
#endif
byte sess;                 /* records read into the current session (bit mask) */
byte sessvals;             /* payee values supplied by session records (bit mask) */

byte conf[2];              /* unused, unexpired exact confirmations for pay(v) */
bit  gen_yes;              /* a generic "yes" was given (binds nothing) */
bit  conf_ever;            /* some confirmation (any kind) was ever issued */

byte ncorr, nconf, ndel, nsess, natk;

/* ---------------- ghost state (ground truth; NOT readable by the gate) ---------------- */
bit  g_trusted[N];         /* every root of the record's true lineage was written with trusted authority */
byte g_corr[N];            /* principals whose corroboration is truly trusted (trusted principal, trusted evidence) */
byte g_conf[2];            /* matching, unused, unexpired user confirmations for pay(v) */
bit  g_shown;              /* the agent was shown untrusted text that no record of the session holds */
#if (CHANNELS & 64)
byte g_cl[N];              /* the record's claims that truly come from a trusted assertion */
#endif

/* The ground truth is computed from principal KIND and the true source, not from the lattice. */
#define TRULY_TRUSTED(p, s) ((KIND(p) == KIND_SYSTEM || KIND(p) == KIND_USER || KIND(p) == KIND_TOOL) && \
                             ((s) == S_POLICY || (s) == S_USERTURN || (s) == S_VERIFIED))

/* scratch: written and reset to 0 inside one d_step, so always 0 in stored states.
   (not "hidden": SPIN's BFS mode, used by run.sh, rejects hidden variables) */
byte ii, qq, tt, dm, cnt, bad, fail;
byte ok, depsok, delok, viac, allow, use_conf, why, shadow, gok, gi, wt;

/* ---------------- printing (simulation / trail replay only) ---------------- */
inline pname(p) {
  if
  :: p == P_REG   -> printf("registry")
  :: p == P_USER  -> printf("user")
  :: p == P_TOOLA -> printf("toolA(domX)")
  :: p == P_TOOLB -> printf("toolB(domX)")
  :: p == P_TOOLC -> printf("toolC(domY)")
  :: p == P_AGENT -> printf("agent")
  :: p == P_ATK1  -> printf("attacker1")
  :: p == P_ATK2  -> printf("attacker2")
  fi
}
inline aname(a) {
  if
  :: a == A_EXT   -> printf("external_untrusted")
  :: a == A_MODEL -> printf("model_inferred")
  :: a == A_TOOL  -> printf("trusted_tool_verified")
  :: a == A_USER  -> printf("user_confirmed")
  :: a == A_SYS   -> printf("system_policy")
  fi
}
inline sname(s) {
  if
  :: s == S_POLICY   -> printf("policy")
  :: s == S_USERTURN -> printf("user-turn")
  :: s == S_VERIFIED -> printf("verified-upstream")
  :: s == S_AGENT    -> printf("model-output")
  :: s == S_WEB      -> printf("open-web")
  fi
}
inline vname(v) {
  if :: v == V_LEGIT -> printf("LEGIT") :: else -> printf("ATTACKER") fi
}
#if (CHANNELS & 64)
inline clname(c) {
  printf("{");
  if :: c & CL_IL -> printf(" LEGIT:intent=pay") :: else fi;
  if :: c & CL_IA -> printf(" ATTACKER:intent=pay") :: else fi;
  if :: c & CL_L -> printf(" payee_account=LEGIT") :: else fi;
  if :: c & CL_A -> printf(" payee_account=ATTACKER") :: else fi;
  printf(" }")
}
inline turnname(t) {
  if
  :: t == T_NONE      -> printf("(none)")
  :: t == T_REQ       -> printf("\"pay the Acme invoice\"")
  :: t == T_REQ_L     -> printf("\"pay the Acme invoice to LEGIT\"")
  :: t == T_ASK_A     -> printf("\"is ATTACKER really Acme's account?\"")
  :: t == T_REQ_NOT_A -> printf("\"pay the Acme invoice, but never to ATTACKER\"")
  :: t == T_NEG       -> printf("\"do not pay Acme yet\"")
  fi
}
#endif

/* ---------------- store operations ---------------- */
/* write: origin authority = min(principal ceiling, source authority); decided by the store */
inline do_write(p, s, v, b) {
  r_writer[nrec] = p;
#if MUTANT == 4
  r_origin[nrec] = CEIL(p);
#else
  r_origin[nrec] = MIN(CEIL(p), AUTH(s));
#endif
  r_taint[nrec] = r_origin[nrec];
  r_parents[nrec] = 0; r_corrT[nrec] = 0;
  r_val[nrec] = v; r_benign[nrec] = b; r_del[nrec] = 0; r_derived[nrec] = 0;
  g_trusted[nrec] = TRULY_TRUSTED(p, s); g_corr[nrec] = 0;
  if :: KIND(p) == KIND_EXTERNAL -> natk++ :: else fi;
  printf("OP write r%d by ", nrec); pname(p); printf(" src="); sname(s);
  printf(" payee="); vname(v); printf(" looksBenign=%d -> origin=", b); aname(r_origin[nrec]);
#if (CHANNELS & 64)
  r_cl[nrec] = ROOT_CLAIMS(p, s, v); r_tm[nrec] = ROOT_MENTIONS(p, v);
  g_cl[nrec] = (g_trusted[nrec] -> r_cl[nrec] : 0);
  printf(" claims="); clname(r_cl[nrec]);
  if :: p == P_REG -> printf(" text also names ATTACKER (\"never pay it\")") :: else fi;
#endif
  printf("   [ghost trusted_origin=%d]\n", g_trusted[nrec]);
  nrec++
}

/* derive (summarize): inputs = declared from (f) + every record read in the session.
   rc = 1: the summary restates the claims of its declared input f, its payee claim with
   the summary's value v (DCLAIMS); the store accepts only claims present in f (except
   MUTANT 7), so the environment offers rc = 1 only then.  A derived claim truly comes
   from a trusted assertion iff a record of the session truly made that same claim. */
#if (CHANNELS & 64)
#define DCLAIMS(F, V, RC) ((RC) -> (((r_cl[F] & CL_I) != 0 -> CLI(V) : 0) | ((r_cl[F] & (CL_L | CL_A)) != 0 -> CLV(V) : 0)) : 0)
#endif
inline do_derive(f, keep, v, rc) {
  tt = A_SYS; gi = 1; dm = 0;
  for (ii : 0 .. N-1) {
    if
    :: (sess >> ii) & 1 ->
#if MUTANT == 1
       if :: ii == f -> tt = MIN(tt, r_taint[ii]) :: else fi;
#else
       tt = MIN(tt, r_taint[ii]);
#endif
#if (CHANNELS & 64)
       dm = dm | g_cl[ii];
#endif
       gi = gi && g_trusted[ii]
    :: else
    fi
  }
#if (CHANNELS & 64)
  r_cl[nrec] = DCLAIMS(f, v, rc); r_tm[nrec] = CLV(v);
  g_cl[nrec] = r_cl[nrec] & dm;
#endif
  r_writer[nrec] = P_AGENT;
  r_origin[nrec] = MIN(CEIL(P_AGENT), AUTH(S_AGENT));
  r_taint[nrec] = tt;
  r_parents[nrec] = (keep -> (1 << f) : 0);
  r_corrT[nrec] = 0;
  r_val[nrec] = v; r_benign[nrec] = 1; r_del[nrec] = 0; r_derived[nrec] = 1;
  g_trusted[nrec] = gi; g_corr[nrec] = 0;
  printf("OP derive r%d = summarize(from r%d, session=0x%x) edge=", nrec, f, sess);
  if :: keep -> printf("kept") :: else -> printf("DROPPED") fi;
  printf(" payee="); vname(v); printf(" looksBenign=1 -> taint="); aname(tt);
#if (CHANNELS & 64)
  printf(" claims="); clname(r_cl[nrec]);
#endif
  printf("   [ghost trusted_origin=%d]\n", gi);
  nrec++;
  tt = 0; gi = 0; ii = 0; dm = 0
}

inline do_corroborate(r, p, s) {
#if MUTANT == 3
  tt = CEIL(p);
#else
  tt = MIN(CEIL(p), AUTH(s));
#endif
  printf("OP corroborate r%d by ", r); pname(p); printf(" evidence="); sname(s);
  printf(" -> recorded authority="); aname(tt); printf("\n");
  /* the store records every corroboration; only those of authority >= trusted_tool_verified
     can ever count, so only they are kept in the state vector */
  if
  :: tt >= A_TOOL && ((r_corrT[r] >> p) & 1) == 0 -> r_corrT[r] = r_corrT[r] | (1 << p); ncorr++
  :: else
  fi;
  if :: TRULY_TRUSTED(p, s) -> g_corr[r] = g_corr[r] | (1 << p) :: else fi;
  tt = 0
}

/* ====================== BEGIN GATE ====================== */
/* The gate reads only store state, the session, and confirmations -- never a
   g_ (ghost) variable.  gate(v, G, dry): decision of gate rule G on pay(v).
   Outputs: allow, use_conf, why.  dry = 1: decide only (do not consume a
   confirmation); used to print, in trails of the baseline gates, what the
   memauth rule decides on the very same state.
   Dependencies = every record read into the session (context taint; this
   includes every record that supplied the payee value). */

/* number of counted corroborations of record r under rule G -> cnt */
inline corr_count(r, G) {
  dm = 0; cnt = 0;
  for (qq : 0 .. NP-1) {
    if
    :: ((r_corrT[r] >> qq) & 1) && qq != r_writer[r] ->
       if
       :: G == GATE_NAIVE_CORROB -> dm = dm | (1 << qq)          /* distinct principals only */
       :: G != GATE_NAIVE_CORROB && DOM(qq) != DOM(r_writer[r]) ->
          dm = dm | (1 << DOM(qq))                               /* distinct domains, not the writer's */
       :: else
       fi
    :: else
    fi
  }
  for (qq : 0 .. NP-1) { cnt = cnt + ((dm >> qq) & 1) }
  qq = 0; dm = 0
}

/* why: 0 allowed by authority, 5 allowed with >= 1 dependency raised by corroboration,
        6 allowed by intent and claims (context dependencies set aside),
        1 allowed by confirmation, 2 deleted_source,
        3 untrusted_origin (no counted corroboration), 4 missing_corroboration (some, fewer than K) */
inline gate(v, G, dry) {
  allow = 0; use_conf = 0; depsok = 1; delok = 1; why = 3; bad = 0; fail = 0; viac = 0;
#if GATE == GATE_LINEAGE   /* (compiled only where used, so SPIN can drop unread store fields) */
  if
  :: G == GATE_LINEAGE ->
     /* bad bit i: record i, or an ancestor reachable over recorded (live) edges,
        has origin external_untrusted.  Parents always have smaller ids. */
     for (ii : 0 .. N-1) {
       if
       :: ii < nrec && (r_origin[ii] == A_EXT || (r_parents[ii] & bad) != 0) -> bad = bad | (1 << ii)
       :: else
       fi
     }
  :: else
  fi;
#endif
  for (ii : 0 .. N-1) {
    if
    :: (sess >> ii) & 1 ->
       if :: r_del[ii] -> delok = 0 :: else fi;            /* deleted_source */
       if
#if GATE == GATE_CONTENT
       :: G == GATE_CONTENT -> ok = r_benign[ii]
#endif
#if GATE == GATE_LINEAGE
       :: G == GATE_LINEAGE -> ok = (((bad >> ii) & 1) == 0)
#endif
       :: else              -> ok = (r_taint[ii] >= A_TOOL) /* action authority = carried taint */
       fi;
       if
       :: !ok && G != GATE_CONTENT ->                      /* corroboration: the only way up */
          corr_count(ii, G); ok = (cnt >= K);
          if :: ok -> viac = 1 :: else fi;
          if :: !ok && cnt > 0 -> fail = 1 :: else fi; cnt = 0
       :: else
       fi;
#if (CHANNELS & 64)
       /* claims a dependency supplies: those of records with action authority >= threshold */
       if
#if GATE == GATE_ANY_CLAIM
       :: G == GATE_ANY_CLAIM -> icl = icl | r_cl[ii]               /* any authority */
#endif
#if GATE == GATE_MENTION
       :: G == GATE_MENTION && ok -> icl = icl | r_cl[ii] | r_tm[ii] /* a mention supplies */
#endif
       :: G != GATE_ANY_CLAIM && G != GATE_MENTION && ok -> icl = icl | r_cl[ii]
       :: else
       fi;
#endif
       depsok = depsok && ok
    :: else
    fi
  };
#if GATE == GATE_CONTENT
  if
  :: G == GATE_CONTENT && !depsok ->                       /* ">= 2 records assert the value" */
     for (ii : 0 .. N-1) {
       if :: ii < nrec && !r_del[ii] && r_val[ii] == v -> cnt++ :: else fi
     }
     depsok = (cnt >= 2); cnt = 0
  :: else
  fi;
#endif
#if (CHANNELS & 64)
  /* intent and every value with trusted provenance: context dependencies do not make the
     action untrusted.  Intent: the user's turn requests the action (not negated), or a
     standing-instruction claim of a dependency with action authority >= threshold, or
     the application asserts it and the requester's own origin is >= threshold.  Value:
     a claim of such a dependency, or the user's turn. */
  if
  :: delok && !depsok ->
#if MUTANT == 8
     ok = (TURN_REQ(turn) || (icl & CLI(v)) != 0 || rq != RQ_AGENT);
#else
     ok = (TURN_REQ(turn) || (icl & CLI(v)) != 0 || (rq != RQ_AGENT && RQ_AUTH(rq) >= A_TOOL));
#endif
#if GATE == GATE_NO_INTENT
     if :: G == GATE_NO_INTENT -> ok = 1 :: else fi;        /* intent not asked for */
#endif
     ok = ok && (TURN_SUP(turn, v) || ((icl >> v) & 1));
     if :: ok -> depsok = 1; viac = 2 :: else fi
  :: else
  fi;
#endif
  if
  :: delok && depsok -> allow = 1; why = (viac == 2 -> 6 : (viac -> 5 : 0))
#if GATE == GATE_LOOSE_CONFIRM
  :: delok && !depsok && G == GATE_LOOSE_CONFIRM && conf_ever ->
     allow = 1; why = 1                                    /* any confirmation ever seen */
#endif
  :: delok && !depsok && G != GATE_LOOSE_CONFIRM && conf[v] > 0 ->
     allow = 1; why = 1; use_conf = 1;                     /* scoped: this action+args, single use */
#if MUTANT != 2
     if :: !dry -> conf[v]-- :: else fi
#else
     skip
#endif
  :: !delok -> why = 2
  :: delok && !depsok && fail -> why = 4
  :: else
  fi;
  ii = 0; bad = 0; ok = 0; depsok = 0; delok = 0; fail = 0; viac = 0;
#if (CHANNELS & 64)
  icl = 0;
#endif
  skip
}
/* ======================= END GATE ======================= */

/* ---------------- invariant (reads ghost state) ---------------- */
/* ghost count of pairwise independent, truly trusted corroborators of r (none the writer) */
inline ghost_corr_count(r) {
  dm = 0; cnt = 0;
  for (qq : 0 .. NP-1) {
    if
    :: ((g_corr[r] >> qq) & 1) && qq != r_writer[r] -> dm = dm | (1 << DOM(qq))
    :: else
    fi
  }
  for (qq : 0 .. NP-1) { cnt = cnt + ((dm >> qq) & 1) }
  qq = 0; dm = 0
}

inline check_invariant(v) {
  gok = 1;
  for (ii : 0 .. N-1) {
    if
    :: (sess >> ii) & 1 ->
       gi = g_trusted[ii];
       if :: !gi -> ghost_corr_count(ii); gi = (cnt >= K); cnt = 0 :: else fi;
       gok = gok && gi
    :: else
    fi
  }
  gok = gok && !g_shown;     /* every text the agent saw is a dependency, or the action is confirmed */
#if (CHANNELS & 64)
  /* or: the intent AND the value each have trusted provenance.  Intent: the user truly
     asked for the payment, or the application (a truly trusted principal whose planner saw
     only the user's turn) asserts it, or a session record truly carries a trusted
     standing instruction; value: the user truly asserted it, or a session record truly
     carries a trusted claim of it.  A record's claims are truly trusted when they come from
     a trusted assertion (g_cl) or the record is corroborated by K independent trusted
     principals. */
  if
  :: !gok ->
     tt = (g_turn_req(turn) || rq == RQ_APP_INT);
     wt = g_turn_asserts(turn, v);
     for (ii : 0 .. N-1) {
       if
       :: (sess >> ii) & 1 ->
          gi = g_cl[ii];
          ghost_corr_count(ii); if :: cnt >= K -> gi = gi | r_cl[ii] :: else fi; cnt = 0;
          tt = tt || ((gi & CLI(v)) != 0);
          wt = wt || ((gi >> v) & 1)
       :: else
       fi
     }
     gok = tt && wt; tt = 0; wt = 0
  :: else
  fi;
#endif
  if
  :: gok -> skip
  :: else ->
     if
     :: g_conf[v] > 0 -> g_conf[v]--          /* covered by a matching unused confirmation */
     :: else ->
        printf("INVARIANT VIOLATED: pay(");
        vname(v); printf(") allowed with a dependency (or a text shown to the agent) that is neither of trusted origin, nor corroborated by %d independent trusted principals, nor confirmed", K);
#if (CHANNELS & 64)
        printf("; and its intent or its value has no trusted provenance");
#endif
        printf("\n");
        assert(false)
     fi
  fi;
  ii = 0; gok = 0; gi = 0
}

/* ---------------- non-vacuity probes ----------------
   WITNESS=n makes the model assert(false) the first time situation n occurs
   under the compiled gate (run with GATE_MEMAUTH).  SPIN reporting the
   assertion = the situation is reachable.  Probes may read anything (they
   are observers, not gates).
   Utility (memauth still ALLOWS legitimate work):
     1 pay(LEGIT) allowed, no confirmation, from trusted root records
     2 pay(LEGIT) allowed, no confirmation, from an agent summary of trusted
       data, read in a later session (derivation keeps authority)
     3 pay allowed, no confirmation, although a dependency has untrusted
       origin: it is corroborated by K independent trusted principals
     4 pay(LEGIT) allowed, no confirmation, from a context-tainted agent note
       (untrusted taint) that K independent trusted principals corroborated
     5 pay allowed through a scoped confirmation although a dependency has
       untrusted origin
   Attack attempts are reached and DENIED (same operations that break the
   baseline gates):
     6 pay(ATTACKER) denied: the only dependencies are benign-looking agent
       summaries whose derivation edge was dropped (laundered; lineage allows)
     7 pay(ATTACKER) denied: attacker record corroborated by exactly the two
       trusted tools of ONE domain (naive corroboration allows)
     8 pay(ATTACKER) denied: a trusted tool echoed attacker web content,
       benign-looking (content gate allows)
     9 pay(ATTACKER) denied although some confirmation was issued (generic
       "yes", other args, used or expired; loose confirmation allows)
   With claims, intent and the user's turn (CHANNELS & 64; attack probes: not denied
   as deleted_source, and the session read an untrusted record):
    10 utility: pay(LEGIT) allowed outright (no confirmation) although the session
       read an untrusted record: the user's turn asks for the payment and a trusted
       claim supplies the payee (the benign variant)
    11 utility: the same with the intent from a trusted standing instruction (no turn)
    12 attack reached+denied: pay(LEGIT) after an untrusted read, payee from a trusted
       claim, but nobody trusted asked for it (induced duplicate payment; no_intent allows)
    13 attack reached+denied: pay(ATTACKER) the user asked for, payee only from an
       untrusted record's claim with the right field name (any_claim allows)
    14 attack reached+denied: pay(ATTACKER) the user asked for, after a trusted record
       that names ATTACKER only to forbid it (mention allows)
    15 attack reached+denied: pay(ATTACKER) with a trusted standing instruction, after
       the user's turn named ATTACKER in a question or to forbid it */
inline witness(v) {
#if WITNESS >= 10
  /* dm bits over the session: 1 an untrusted record, 2 a claim LEGIT of authority >= threshold,
     4 an intent claim of authority >= threshold, 8 a claim ATTACKER below the threshold,
     16 a text of authority >= threshold naming ATTACKER without claiming it */
  dm = 0;
  for (ii : 0 .. N-1) {
    if
    :: (sess >> ii) & 1 ->
       if :: !g_trusted[ii] -> dm = dm | 1 :: else fi;
       if
       :: r_taint[ii] >= A_TOOL ->
          if :: r_cl[ii] & CL_L -> dm = dm | 2 :: else fi;
          if :: r_cl[ii] & CL_I -> dm = dm | 4 :: else fi;
          if :: (r_tm[ii] & CLV(V_ATK)) && !(r_cl[ii] & CL_A) -> dm = dm | 16 :: else fi
       :: else ->
          if :: r_cl[ii] & CL_A -> dm = dm | 8 :: else fi
       fi
    :: else
    fi
  }
#if WITNESS == 10
  wt = allow && !use_conf && v == V_LEGIT && why == 6 && TURN_REQ(turn) && rq == RQ_AGENT && (dm & 1);
#elif WITNESS == 11
  wt = allow && !use_conf && v == V_LEGIT && why == 6 && turn == T_NONE && rq == RQ_AGENT && (dm & 1);
#elif WITNESS == 12
  wt = !allow && why != 2 && v == V_LEGIT && turn == T_NONE && rq == RQ_AGENT && (dm & 1) && (dm & 2) && !(dm & 4);
#elif WITNESS == 13
  wt = !allow && why != 2 && v == V_ATK && TURN_REQ(turn) && (dm & 8);
#elif WITNESS == 14
  wt = !allow && why != 2 && v == V_ATK && TURN_REQ(turn) && (dm & 1) && (dm & 16);
#elif WITNESS == 15
  wt = !allow && why != 2 && v == V_ATK && (turn == T_ASK_A || turn == T_REQ_NOT_A) && (dm & 1) && (dm & 4);
#endif
  if :: wt -> printf("WITNESS %d reached\n", WITNESS); assert(false) :: else fi;
  wt = 0; dm = 0; ii = 0
#elif WITNESS > 0
  wt = 0; fail = 0;
  for (ii : 0 .. N-1) {
    if
    :: (sess >> ii) & 1 ->
#if WITNESS == 1
       fail = fail | (r_derived[ii] || !g_trusted[ii]); wt = 1
#elif WITNESS == 2
       wt = wt || (r_derived[ii] && g_trusted[ii]); fail = fail | (nsess == 0)
#elif WITNESS == 3
       wt = wt || (!g_trusted[ii] && r_taint[ii] < A_TOOL)
#elif WITNESS == 4
       wt = wt || (r_derived[ii] && !g_trusted[ii] && r_taint[ii] < A_TOOL)
#elif WITNESS == 5
       wt = wt || !g_trusted[ii]
#elif WITNESS == 6
       fail = fail | !(r_derived[ii] && r_parents[ii] == 0 && r_benign[ii]); wt = wt || !g_trusted[ii]
#elif WITNESS == 7
       fail = fail | (KIND(r_writer[ii]) != KIND_EXTERNAL);
       wt = wt || (r_corrT[ii] == ((1 << P_TOOLA) | (1 << P_TOOLB)))
#elif WITNESS == 8
       wt = wt || (KIND(r_writer[ii]) == KIND_TOOL && r_origin[ii] == A_EXT); fail = fail | !r_benign[ii]
#elif WITNESS == 9
       wt = 1; fail = fail | (r_taint[ii] >= A_TOOL)
#endif
    :: else
    fi
  }
#if WITNESS == 1 || WITNESS == 2 || WITNESS == 4
  if :: allow && !use_conf && v == V_LEGIT && wt && !fail -> printf("WITNESS %d reached\n", WITNESS); assert(false) :: else fi;
#elif WITNESS == 3
  if :: allow && !use_conf && wt -> printf("WITNESS %d reached\n", WITNESS); assert(false) :: else fi;
#elif WITNESS == 5
  if :: allow && use_conf && wt -> printf("WITNESS %d reached\n", WITNESS); assert(false) :: else fi;
#elif WITNESS == 9
  if :: !allow && v == V_ATK && wt && !fail && conf_ever && conf[v] == 0 -> printf("WITNESS %d reached\n", WITNESS); assert(false) :: else fi;
#else
  if :: !allow && v == V_ATK && wt && !fail -> printf("WITNESS %d reached\n", WITNESS); assert(false) :: else fi;
#endif
  wt = 0; fail = 0; ii = 0
#else
  skip
#endif
}

/* ---------------- environment: attacker, user, tools, agent ----------------
   Every operation is one d_step (one transition, no intermediate states);
   the nondeterministic choice of operation AND parameters is the choice
   among the options of the single do-loop.  Parameters are constants
   substituted by the macros below. */

#define INSESS(x)   (((sess >> (x)) & 1) != 0)
#define LIVE(x)     ((x) < nrec && !r_del[x])
#define UNREAD(x)   (LIVE(x) && !INSESS(x))

/* root write by principal P from source S (the caller never names an authority) */
#define WRITE(P, S, V, B, G) \
  :: d_step { nrec < N && (G) -> do_write(P, S, V, B) }

#if MUTANT == 5
/* the view of R displays the attacker's attached text: the agent sees it (and its payee),
   the session records a read of R only */
#define SHOW_ATTACHED(R) if :: r_att[R] -> g_shown = 1; sessvals = sessvals | (1 << V_ATK); \
                            printf("   (the view of r%d displays the attacker's attached text)\n", R) :: else fi
#else
#define SHOW_ATTACHED(R) skip
#endif
#define READ(R) \
  :: d_step { UNREAD(R) -> sess = sess | (1 << R); sessvals = sessvals | TEXTVALS(R); \
              printf("OP read r%d into session %d\n", R, nsess); SHOW_ATTACHED(R) }

/* the attacker attaches text carrying its payee to live record R as corroboration evidence:
   recorded at external_untrusted (never counted); the view withholds it */
#if MUTANT == 5
#define ATTACH(R) \
  :: d_step { LIVE(R) && !r_att[R] -> r_att[R] = 1; \
              printf("OP attacker1 attaches text (payee ATTACKER) to r%d as evidence\n", R) }
#else
#define ATTACH(R) \
  :: d_step { LIVE(R) -> printf("OP attacker1 attaches text (payee ATTACKER) to r%d as evidence (withheld from views)\n", R) }
#endif

/* toolA fetches an attacker page that repeats session record R with changed case, symbols or
   hidden tag characters carrying the attacker's payee: a new record of the writer's authority,
   read in the session -- or (MUTANT 6) swallowed as an echo of R: shown, not recorded */
#if MUTANT == 6
#define FETCHV(R) \
  :: d_step { nrec < N && INSESS(R) -> g_shown = 1; sessvals = sessvals | (1 << V_ATK); \
              printf("OP toolA fetches a page repeating r%d with hidden text (payee ATTACKER): resolved as an echo of r%d, nothing stored or read\n", R, R) }
#else
#define FETCHV(R) \
  :: d_step { nrec < N && INSESS(R) -> printf("OP toolA fetches a page repeating r%d with hidden text: a new record\n", R); \
              sess = sess | (1 << nrec); sessvals = sessvals | (1 << V_ATK); do_write(P_TOOLA, S_WEB, V_ATK, 1) }
#endif

#define DELETE(R) \
  :: d_step { ndel < MAXDEL && LIVE(R) -> r_del[R] = 1; ndel++; \
              printf("OP delete r%d (content erased, hash/metadata kept)\n", R) }

/* summarize with the declared edge kept (from F) */
#define DERIVE_KEEP0(F, V) \
  :: d_step { nrec < N && INSESS(F) && ((sessvals >> V) & 1) -> do_derive(F, 1, V, 0) }
/* summarize with the edge dropped (declared from F, but no derivedFrom recorded) */
#define DERIVE_DROP0(F, V) \
  :: d_step { nrec < N && INSESS(F) && ((sessvals >> V) & 1) -> do_derive(F, 0, V, 0) }
#if (CHANNELS & 64)
/* ... and the summary restates the claims of F, its payee claim with the value V: the store
   accepts it only if F carries every one of those claims (MUTANT 7: no check) */
#if MUTANT == 7
#define CLAIMS_OK(F, V) (r_cl[F] != 0)
#else
#define CLAIMS_OK(F, V) (r_cl[F] != 0 && (DCLAIMS(F, V, 1) & ~r_cl[F]) == 0)
#endif
#define DERIVE_KEEP(F, V) DERIVE_KEEP0(F, V) \
  :: d_step { nrec < N && INSESS(F) && ((sessvals >> V) & 1) && CLAIMS_OK(F, V) -> do_derive(F, 1, V, 1) }
#define DERIVE_DROP(F, V) DERIVE_DROP0(F, V) \
  :: d_step { nrec < N && INSESS(F) && ((sessvals >> V) & 1) && CLAIMS_OK(F, V) -> do_derive(F, 0, V, 1) }
#else
#define DERIVE_KEEP(F, V) DERIVE_KEEP0(F, V)
#define DERIVE_DROP(F, V) DERIVE_DROP0(F, V)
#endif

/* Only records whose carried taint is below trusted_tool_verified are offered for
   corroboration: for a record with taint >= trusted_tool_verified every gate's
   per-record check already passes without corroboration and the record is of
   truly trusted origin, so corroborating it cannot change any gate decision or
   the invariant (pure state-space reduction). */
#define CORR(R, P, S) \
  :: d_step { ncorr < MAXCORR && LIVE(R) && r_taint[R] < A_TOOL -> do_corroborate(R, P, S) }
#if N > 3
#define CORR4(P, S) CORR(0, P, S) CORR(1, P, S) CORR(2, P, S) CORR(3, P, S)
#else
#define CORR4(P, S) CORR(0, P, S) CORR(1, P, S) CORR(2, P, S)
#endif

#define ACT(V) \
  :: d_step { ((sessvals >> V) & 1) -> act(V) }
#if (CHANNELS & 64)
/* the agent asserts intent itself, or the application asserts it (its planner saw only the
   user's turn) */
#define ACT_RQ(V, RQ) \
  :: d_step { ((sessvals >> V) & 1) -> rq = RQ; act(V); rq = 0 }
#define TURN(T) \
  :: d_step { turn == T_NONE -> turn = T; sessvals = sessvals | TURN_MENTIONS(T); \
              printf("OP user's turn in session %d: ", nsess); turnname(T); printf("\n") }
#endif

inline whyname(w) {
  if
  :: w == 0 -> printf("authority")
  :: w == 1 -> printf("confirmation")
  :: w == 2 -> printf("deleted_source")
  :: w == 3 -> printf("untrusted_origin, needs_confirmation")
  :: w == 4 -> printf("missing_corroboration, needs_confirmation")
  :: w == 5 -> printf("authority via independent corroboration")
  :: w == 6 -> printf("intent and values with trusted provenance, context set aside")
  fi
}

inline act(v) {
#if GATE != GATE_MEMAUTH
  gate(v, GATE_MEMAUTH, 1);                  /* shadow decision, printed only */
  shadow = allow * 8 + why;
#endif
  gate(v, GATE, 0);
#if (CHANNELS & 64)
  if
  :: rq == RQ_AGENT_INT -> printf("OP agent (asserting intent itself) requests pay(")
  :: rq == RQ_APP_INT   -> printf("OP application (asserting intent from its planner) requests pay(")
  :: else               -> printf("OP agent requests pay(")
  fi;
  vname(v); printf(") deps(session)=0x%x -> ", sess);
#else
  printf("OP agent requests pay("); vname(v); printf(") deps(session)=0x%x -> ", sess);
#endif
  if :: allow -> printf("ALLOW (") :: else -> printf("deny (") fi;
  whyname(why); printf(")");
#if GATE != GATE_MEMAUTH
  printf("   [memauth on this same state: ");
  if :: shadow >= 8 -> printf("allow (") :: else -> printf("deny (") fi;
  whyname(shadow % 8); printf(")]");
#endif
  printf("\n");
  witness(v);
  if :: allow -> check_invariant(v) :: else fi;
  allow = 0; use_conf = 0; why = 0; shadow = 0
}

active proctype env() {
end_env:
  do
  /* ---- root writes (value is what the source asserts) ---- */
  WRITE(P_REG,   S_POLICY,   V_LEGIT, 1, true)          /* registry: the legit payee */
  WRITE(P_USER,  S_USERTURN, V_LEGIT, 1, true)          /* user's own statement */
  WRITE(P_TOOLA, S_VERIFIED, V_LEGIT, 1, true)          /* trusted tool, verified upstream */
#if (CHANNELS & 4)
  WRITE(P_TOOLA, S_WEB,      V_ATK,   1, true)          /* trusted-tool echo of an attacker page */
#endif
  WRITE(P_ATK1,  S_WEB,      V_ATK,   0, natk < MAXATK) /* attacker page/email, suspicious-looking */
#if (CHANNELS & 1)
  WRITE(P_ATK1,  S_WEB,      V_ATK,   1, natk < MAXATK) /* adaptive attacker: benign-looking text */
#endif

  /* ---- session reads / session boundary / deletion ---- */
  READ(0) READ(1) READ(2)
#if N > 3
  READ(3)
#endif
  :: d_step { nsess < MAXSESS - 1 && sess != 0 ->
       sess = 0; sessvals = 0; g_shown = 0; nsess++;
#if (CHANNELS & 64)
       turn = T_NONE;
#endif
       printf("OP new session %d (context cleared, memory kept)\n", nsess) }
  DELETE(0) DELETE(1) DELETE(2)
#if N > 3
  DELETE(3)
#endif

#if (CHANNELS & 2)
  /* ---- agent self-summarization ---- */
  DERIVE_KEEP(0, V_ATK)   DERIVE_KEEP(1, V_ATK)   DERIVE_KEEP(2, V_ATK)
  DERIVE_KEEP(0, V_LEGIT) DERIVE_KEEP(1, V_LEGIT) DERIVE_KEEP(2, V_LEGIT)
  DERIVE_DROP(0, V_ATK)   DERIVE_DROP(1, V_ATK)   DERIVE_DROP(2, V_ATK)
  DERIVE_DROP(0, V_LEGIT) DERIVE_DROP(1, V_LEGIT) DERIVE_DROP(2, V_LEGIT)
#if N > 3
  DERIVE_KEEP(3, V_ATK) DERIVE_KEEP(3, V_LEGIT)
  DERIVE_DROP(3, V_ATK) DERIVE_DROP(3, V_LEGIT)
#endif
#endif

#if (CHANNELS & 8)
  /* ---- corroboration: trusted principals with their own evidence ... ---- */
  CORR4(P_TOOLA, S_VERIFIED)
  CORR4(P_TOOLB, S_VERIFIED)   /* same domain as toolA: correlated */
  CORR4(P_TOOLC, S_VERIFIED)   /* independent domain */
  /* ... and corroborations the store records at low authority (Sybil / echo / model) */
  CORR4(P_ATK1,  S_WEB)
  CORR4(P_ATK2,  S_WEB)
  CORR4(P_TOOLB, S_WEB)        /* trusted tool whose evidence is an open-web page */
  CORR4(P_AGENT, S_AGENT)
#endif

#if (CHANNELS & 16)
  /* ---- user confirmations ---- */
  :: d_step { nconf < MAXCONF -> conf[V_LEGIT]++; g_conf[V_LEGIT]++; conf_ever = 1; nconf++;
              printf("OP user confirms exactly pay(LEGIT), single use\n") }
  :: d_step { nconf < MAXCONF -> conf[V_ATK]++; g_conf[V_ATK]++; conf_ever = 1; nconf++;
              printf("OP user confirms exactly pay(ATTACKER), single use\n") }
  :: d_step { nconf < MAXCONF && !gen_yes -> gen_yes = 1; conf_ever = 1; nconf++;
              printf("OP user says a generic \"yes\" (binds no action/args)\n") }
  :: d_step { (conf[0] + conf[1]) > 0 -> conf[0] = 0; conf[1] = 0; g_conf[0] = 0; g_conf[1] = 0;
              printf("OP confirmations expire\n") }
#endif

#if (CHANNELS & 32)
  /* ---- text of a lower principal displayed through a higher record ---- */
  ATTACH(0) ATTACH(1) ATTACH(2)
  FETCHV(0) FETCHV(1) FETCHV(2)
#if N > 3
  ATTACH(3) FETCHV(3)
#endif
#endif

  /* ---- the agent attempts the high-risk action pay(payee); payee taken from session memory ---- */
  ACT(V_ATK)
  ACT(V_LEGIT)
#if (CHANNELS & 64)
  ACT_RQ(V_ATK, RQ_AGENT_INT)   ACT_RQ(V_LEGIT, RQ_AGENT_INT)
  ACT_RQ(V_ATK, RQ_APP_INT)     ACT_RQ(V_LEGIT, RQ_APP_INT)
  /* ---- the user's turn ---- */
  TURN(T_REQ) TURN(T_REQ_L) TURN(T_ASK_A) TURN(T_REQ_NOT_A) TURN(T_NEG)
#endif
  od
}
