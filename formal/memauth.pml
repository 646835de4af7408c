/*
 * memauth.pml -- Promela model of memauth's origin-bound action authority.
 *
 * Specification: DESIGN.md (authority lattice, origin = min(principal ceiling,
 * source authority), taint carried through derivation incl. every record read
 * in the session, corroboration by pairwise independent trusted principals,
 * scoped single-use confirmation, action gate for high-risk actions).
 *
 * One nondeterministic environment process (attacker + user + tools + agent)
 * chooses every operation; bounded counters keep the state space finite.
 *
 * Compile-time selection (spin -D...):
 *   GATE      1 = GATE_MEMAUTH        the DESIGN.md rule (default)
 *             2 = GATE_CONTENT        "looks benign" or >= 2 records assert the value
 *             3 = GATE_LINEAGE        deny only on a live edge to an untrusted ancestor
 *             4 = GATE_NAIVE_CORROB   corroboration counted per principal, no domain check
 *             5 = GATE_LOOSE_CONFIRM  (extra) any confirmation ever issued counts
 *   K         corroboration threshold (default 2)
 *   CHANNELS  bit mask of enabled laundering channels (default 31 = all)
 *               1 ADAPTIVE  attacker's raw text may look benign
 *               2 SUMMARY   agent derivation/summarization (edge kept or dropped)
 *               4 ECHO      trusted tool writes attacker-controlled (web) content
 *               8 CORROB    manufactured corroboration: 2nd attacker record,
 *                           corroborate operations (Sybil, correlated, independent)
 *              16 CONFIRM   user confirmations: exact, generic "yes", expiry
 *   WITNESS   0 = normal run (check the invariant)
 *             n>0 = non-vacuity probe: assert(false) when situation n is reached
 *                   (see the WITNESS block in ACT; SPIN must find it)
 *
 * GROUND TRUTH: every identifier starting with g_ is a ghost variable.  Ghost
 * variables are written by the environment and read ONLY by the invariant and
 * by the WITNESS probes -- never by the gate.  The gate is the code between
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

#define GATE_MEMAUTH        1
#define GATE_CONTENT        2
#define GATE_LINEAGE        3
#define GATE_NAIVE_CORROB   4
#define GATE_LOOSE_CONFIRM  5

#define CH_ADAPTIVE ((CHANNELS & 1) != 0)
#define CH_SUMMARY  ((CHANNELS & 2) != 0)
#define CH_ECHO     ((CHANNELS & 4) != 0)
#define CH_CORROB   ((CHANNELS & 8) != 0)
#define CH_CONFIRM  ((CHANNELS & 16) != 0)

/* ---------------- bounds (finite state space) ---------------- */
#define N        4   /* max records (choosers below are written for N = 4) */
#define NP       8   /* principals */
#define MAXCORR  3   /* corroborate operations */
#define MAXCONF  2   /* confirmation-issuing operations */
#define MAXDEL   1   /* deletions */
#define MAXSESS  3   /* sessions (so 2 session boundaries) */
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
#define NATIVE_SRC(p) ((p) == 0 -> S_POLICY : ((p) == 1 -> S_USERTURN : ((p) <= 4 -> S_VERIFIED : ((p) == 5 -> S_AGENT : S_WEB))))

/* action argument values (payee of a payment) */
#define V_LEGIT  0
#define V_ATK    1

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

/* The ground truth is computed from principal KIND and the true source, not from the lattice. */
#define TRULY_TRUSTED(p, s) ((KIND(p) == KIND_SYSTEM || KIND(p) == KIND_USER || KIND(p) == KIND_TOOL) && \
                             ((s) == S_POLICY || (s) == S_USERTURN || (s) == S_VERIFIED))

/* scratch: written and reset to 0 inside one d_step, so always 0 in stored states.
   (not "hidden": hidden variables are incompatible with BFS, see run.sh) */
byte ii, qq, tt, dm, cnt, bad, fail;
byte ok, depsok, delok, allow, use_conf, gok, gi, wt;

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

/* ---------------- store operations ---------------- */
/* write: origin authority = min(principal ceiling, source authority); decided by the store */
inline do_write(p, s, v, b) {
  r_writer[nrec] = p;
  r_origin[nrec] = MIN(CEIL(p), AUTH(s));
  r_taint[nrec] = r_origin[nrec];
  r_parents[nrec] = 0; r_corrT[nrec] = 0;
  r_val[nrec] = v; r_benign[nrec] = b; r_del[nrec] = 0; r_derived[nrec] = 0;
  g_trusted[nrec] = TRULY_TRUSTED(p, s); g_corr[nrec] = 0;
  if :: KIND(p) == KIND_EXTERNAL -> natk++ :: else fi;
  printf("OP write r%d by ", nrec); pname(p); printf(" src="); sname(s);
  printf(" payee="); vname(v); printf(" looksBenign=%d -> origin=", b); aname(r_origin[nrec]);
  printf("   [ghost trusted_origin=%d]\n", g_trusted[nrec]);
  nrec++
}

/* derive (summarize): inputs = declared from (f) + every record read in the session */
inline do_derive(f, keep, v) {
  tt = A_SYS; gi = 1;
  for (ii : 0 .. N-1) {
    if
    :: (sess >> ii) & 1 -> tt = MIN(tt, r_taint[ii]); gi = gi && g_trusted[ii]
    :: else
    fi
  }
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
  printf("   [ghost trusted_origin=%d]\n", gi);
  nrec++;
  tt = 0; gi = 0; ii = 0
}

inline do_corroborate(r, p, s) {
  tt = MIN(CEIL(p), AUTH(s));
  if :: tt >= A_TOOL -> r_corrT[r] = r_corrT[r] | (1 << p) :: else fi;
  if :: TRULY_TRUSTED(p, s) -> g_corr[r] = g_corr[r] | (1 << p) :: else fi;
  ncorr++;
  printf("OP corroborate r%d by ", r); pname(p); printf(" evidence="); sname(s);
  printf(" -> recorded authority="); aname(tt); printf("\n");
  tt = 0
}

/* ====================== BEGIN GATE ====================== */
/* The gate reads only store state, the session, and confirmations.
   Inputs: v (payee argument).  Outputs: allow, use_conf.
   Dependencies = every record read into the session (context taint; this
   includes every record that supplied the payee value). */

/* number of counted corroborations of record r -> cnt */
inline corr_count(r) {
  dm = 0; cnt = 0;
  for (qq : 0 .. NP-1) {
    if
    :: ((r_corrT[r] >> qq) & 1) && qq != r_writer[r] ->
#if GATE == GATE_NAIVE_CORROB
       dm = dm | (1 << qq)                      /* distinct principals only */
#else
       if
       :: DOM(qq) != DOM(r_writer[r]) -> dm = dm | (1 << DOM(qq))   /* distinct domains, not the writer's */
       :: else
       fi
#endif
    :: else
    fi
  }
  for (qq : 0 .. NP-1) { cnt = cnt + ((dm >> qq) & 1) }
  qq = 0; dm = 0
}

inline gate(v) {
  allow = 0; use_conf = 0; depsok = 1; delok = 1;
#if GATE == GATE_LINEAGE
  /* bad bit i: record i, or an ancestor reachable over recorded (live) edges,
     has origin external_untrusted.  Parents always have smaller ids. */
  bad = 0;
  for (ii : 0 .. N-1) {
    if
    :: ii < nrec && (r_origin[ii] == A_EXT || (r_parents[ii] & bad) != 0) -> bad = bad | (1 << ii)
    :: else
    fi
  }
#endif
  for (ii : 0 .. N-1) {
    if
    :: (sess >> ii) & 1 ->
       if :: r_del[ii] -> delok = 0 :: else fi;           /* deleted_source */
#if GATE == GATE_CONTENT
       ok = r_benign[ii];
#elif GATE == GATE_LINEAGE
       ok = (((bad >> ii) & 1) == 0);
#else
       ok = (r_taint[ii] >= A_TOOL);                      /* action authority from carried taint */
#endif
#if GATE != GATE_CONTENT
       if
       :: !ok -> corr_count(ii); ok = (cnt >= K); cnt = 0 /* corroboration: the only way up */
       :: else
       fi;
#endif
       depsok = depsok && ok
    :: else
    fi
  }
#if GATE == GATE_CONTENT
  if
  :: !depsok ->                     /* ">= 2 records assert the value" */
     cnt = 0;
     for (ii : 0 .. N-1) {
       if :: ii < nrec && !r_del[ii] && r_val[ii] == v -> cnt++ :: else fi
     }
     depsok = (cnt >= 2); cnt = 0
  :: else
  fi;
#endif
  if
  :: delok && depsok -> allow = 1
#if GATE == GATE_LOOSE_CONFIRM
  :: delok && !depsok && conf_ever -> allow = 1           /* any confirmation ever seen */
#else
  :: delok && !depsok && conf[v] > 0 -> allow = 1; use_conf = 1; conf[v]--   /* scoped, single use */
#endif
  :: else
  fi;
  ii = 0; bad = 0; ok = 0; depsok = 0; delok = 0
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
  if
  :: gok -> skip
  :: else ->
     if
     :: g_conf[v] > 0 -> g_conf[v]--          /* covered by a matching unused confirmation */
     :: else ->
        printf("INVARIANT VIOLATED: pay(");
        vname(v); printf(") allowed with a dependency that is neither of trusted origin, nor corroborated by %d independent trusted principals, nor confirmed\n", K);
        assert(false)
     fi
  fi;
  ii = 0; gok = 0; gi = 0
}

/* ---------------- non-vacuity probes ---------------- */
inline witness(v) {
#if WITNESS > 0
  wt = 0; fail = 0;
  for (ii : 0 .. N-1) {
    if
    :: (sess >> ii) & 1 ->
#if WITNESS == 1   /* legit payment allowed from trusted root records, no confirmation */
       fail = fail | (r_derived[ii] || !g_trusted[ii]); wt = 1
#elif WITNESS == 2 /* legit payment allowed from an agent summary of trusted data, in a later session */
       wt = wt || (r_derived[ii] && g_trusted[ii]); fail = fail | (nsess == 0)
#elif WITNESS == 3 /* allowed (no confirmation) although a dependency has untrusted origin: independent corroboration */
       wt = wt || (!g_trusted[ii] && r_taint[ii] < A_TOOL)
#elif WITNESS == 4 /* allowed through a scoped confirmation although a dependency has untrusted origin */
       wt = wt || !g_trusted[ii]
#elif WITNESS == 5 /* DENIED: laundered summary (edge dropped) of attacker data, read alone in a later session */
       fail = fail | !(r_derived[ii] && r_parents[ii] == 0 && r_benign[ii]); wt = wt || !g_trusted[ii]
#elif WITNESS == 6 /* DENIED: attacker record corroborated by 2 trusted principals of one domain */
       fail = fail | (KIND(r_writer[ii]) != KIND_EXTERNAL);
       wt = wt || (r_corrT[ii] == ((1 << P_TOOLA) | (1 << P_TOOLB)))
#elif WITNESS == 7 /* DENIED: trusted tool echoed attacker web content (looks benign) */
       wt = wt || (KIND(r_writer[ii]) == KIND_TOOL && r_origin[ii] == A_EXT && r_benign[ii]); fail = fail | !r_benign[ii]
#elif WITNESS == 8 /* DENIED: only a generic yes / a confirmation for other args / a used or expired one exists */
       wt = 1; fail = fail | r_taint[ii] >= A_TOOL
#endif
    :: else
    fi
  }
#if WITNESS == 1 || WITNESS == 2
  if :: allow && !use_conf && v == V_LEGIT && wt && !fail -> printf("WITNESS %d reached\n", WITNESS); assert(false) :: else fi;
#elif WITNESS == 3
  if :: allow && !use_conf && wt -> printf("WITNESS %d reached\n", WITNESS); assert(false) :: else fi;
#elif WITNESS == 4
  if :: allow && use_conf && wt -> printf("WITNESS %d reached\n", WITNESS); assert(false) :: else fi;
#elif WITNESS == 8
  if :: !allow && v == V_ATK && wt && !fail && conf_ever && conf[v] == 0 -> printf("WITNESS %d reached\n", WITNESS); assert(false) :: else fi;
#else
  if :: !allow && v == V_ATK && wt && !fail -> printf("WITNESS %d reached\n", WITNESS); assert(false) :: else fi;
#endif
  wt = 0; fail = 0; ii = 0
#else
  skip
#endif
}

/* ---------------- environment: attacker, user, tools, agent ---------------- */
#define PICK_REC(r, cond) \
  if \
  :: (0 < nrec) && (cond(0)) -> r = 0 \
  :: (1 < nrec) && (cond(1)) -> r = 1 \
  :: (2 < nrec) && (cond(2)) -> r = 2 \
  :: (3 < nrec) && (cond(3)) -> r = 3 \
  fi

#define ANY_REC(cond) \
  ((0 < nrec && cond(0)) || (1 < nrec && cond(1)) || (2 < nrec && cond(2)) || (3 < nrec && cond(3)))

#define LIVE(x)     (!r_del[x])
#define UNREAD(x)   (!r_del[x] && ((sess >> (x)) & 1) == 0)
#define INSESS(x)   (((sess >> (x)) & 1) != 0)

active proctype env() {
  byte p, s, r, v, b;

end_env:
  do
  /* ---- root writes ---- */
  :: atomic { nrec < N ->
       if
       :: p = P_REG;  s = S_POLICY;   v = V_LEGIT; b = 1                          /* registry: the legit payee */
       :: p = P_USER; s = S_USERTURN; b = 1; if :: v = V_LEGIT :: v = V_ATK fi   /* user's own statement */
       :: if :: p = P_TOOLA :: p = P_TOOLB :: p = P_TOOLC fi;                     /* tool, verified upstream */
          s = S_VERIFIED; b = 1; if :: v = V_LEGIT :: v = V_ATK fi
#if (CHANNELS & 4)
       :: if :: p = P_TOOLA :: p = P_TOOLB :: p = P_TOOLC fi;                     /* trusted-tool echo */
          s = S_WEB; b = 1; if :: v = V_LEGIT :: v = V_ATK fi
#endif
       :: natk < MAXATK ->                                                        /* attacker page / email */
#if (CHANNELS & 8)
          if :: p = P_ATK1 :: p = P_ATK2 fi;
#else
          p = P_ATK1;
#endif
          s = S_WEB; if :: v = V_LEGIT :: v = V_ATK fi;
#if (CHANNELS & 1)
          if :: b = 0 :: b = 1 fi          /* adaptive attacker: text may look benign */
#else
          b = 0
#endif
       fi;
       d_step { do_write(p, s, v, b); p = 0; s = 0; v = 0; b = 0 }
     }

  /* ---- read a record into the session ---- */
  :: atomic { PICK_REC(r, UNREAD);
       d_step {
         sess = sess | (1 << r); sessvals = sessvals | (1 << r_val[r]);
         printf("OP read r%d into session %d\n", r, nsess); r = 0
       }
     }

  /* ---- new session (context cleared; memory persists) ---- */
  :: d_step { nsess < MAXSESS - 1 && sess != 0 ->
       sess = 0; sessvals = 0; nsess++; printf("OP new session %d\n", nsess)
     }

  /* ---- delete (content erased, hash and metadata kept) ---- */
  :: atomic { ndel < MAXDEL && ANY_REC(LIVE) -> PICK_REC(r, LIVE);
       d_step { r_del[r] = 1; ndel++; printf("OP delete r%d\n", r); r = 0 }
     }

#if (CHANNELS & 2)
  /* ---- agent derives a summary from session context ---- */
  :: atomic { nrec < N && sess != 0 ->
       PICK_REC(r, INSESS);                                   /* declared from */
       if :: b = 1 :: b = 0 fi;                               /* edge kept / dropped */
       if :: (sessvals & 1) -> v = V_LEGIT :: (sessvals & 2) -> v = V_ATK fi;
       d_step { do_derive(r, b, v); r = 0; b = 0; v = 0 }
     }
#endif

#if (CHANNELS & 8)
  /* ---- corroboration by any principal, with its own evidence or with web evidence ---- */
  :: atomic { ncorr < MAXCORR && ANY_REC(LIVE) -> PICK_REC(r, LIVE);
       select (p : 0 .. NP-1);
       if :: s = NATIVE_SRC(p) :: s = S_WEB fi;
       d_step { do_corroborate(r, p, s); r = 0; p = 0; s = 0 }
     }
#endif

#if (CHANNELS & 16)
  /* ---- user confirmations ---- */
  :: atomic { nconf < MAXCONF ->
       if
       :: v = V_LEGIT
       :: v = V_ATK
       fi;
       d_step {
         conf[v]++; g_conf[v]++; conf_ever = 1; nconf++;
         printf("OP user confirms exactly pay("); vname(v); printf(") single-use\n"); v = 0
       }
     }
  :: d_step { nconf < MAXCONF && !gen_yes ->
       gen_yes = 1; conf_ever = 1; nconf++; printf("OP user says a generic \"yes\" (binds no action)\n")
     }
  :: d_step { (conf[0] + conf[1]) > 0 ->
       conf[0] = 0; conf[1] = 0; g_conf[0] = 0; g_conf[1] = 0; printf("OP confirmations expire\n")
     }
#endif

  /* ---- the agent attempts the high-risk action pay(payee) ---- */
  :: atomic {
       if :: (sessvals & 1) -> v = V_LEGIT :: (sessvals & 2) -> v = V_ATK fi;
       d_step {
         gate(v);
         printf("OP agent requests pay("); vname(v); printf(") deps(session)=0x%x -> ", sess);
         if :: allow -> printf("ALLOW") :: else -> printf("deny") fi;
         if :: use_conf -> printf(" (consumed confirmation)") :: else fi;
         printf("\n");
         witness(v);
         if :: allow -> check_invariant(v) :: else fi;
         allow = 0; use_conf = 0; v = 0
       }
     }
  od
}
