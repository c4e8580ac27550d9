/* Lamport's TwoPhase commit (TLA+ Examples, transaction_commit/TwoPhase.tla) in Promela, for
 * side-by-side timing against txncheck. Faithful to the TLA+ spec, so it has the same number of
 * distinct states as TLC and txncheck (288 for N=3, 8,832 for N=5, 1,745,408 for N=8):
 *   - msgs is the set of messages ever sent: one bit per message of the finite alphabet
 *     {Prepared(r), Commit, Abort}; messages are never removed;
 *   - each TLA+ action is one atomic, deterministic step (d_step) of a single process whose
 *     program counter never leaves the loop head, so a Spin state is exactly a TLA+ state;
 *   - stuttering steps (e.g. RMRcvCommitMsg by a committed RM) revisit the same state, as in TLC.
 * Build: spin -DN=8 -a twophase.pml && gcc -O2 -DNOREDUCE -DSAFETY -o pan pan.c && ./pan -w22
 */
#ifndef N
#define N 3
#endif

#define working   0
#define prepared  1
#define committed 2
#define aborted   3

byte rmState[N];     /* RMState: working, prepared, committed, aborted */
bit  tmDone;         /* tmState: 0 = "init", 1 = "done" */
bit  tmPrepared[N];  /* the set of RMs from which the TM has received Prepared */
bit  msgPrepared[N]; /* [type |-> "Prepared", rm |-> r] \in msgs */
bit  msgCommit;      /* [type |-> "Commit"] \in msgs */
bit  msgAbort;       /* [type |-> "Abort"] \in msgs */

#if N > 0
#define TP0 tmPrepared[0]
#else
#define TP0 1
#endif
#if N > 1
#define TP1 tmPrepared[1]
#else
#define TP1 1
#endif
#if N > 2
#define TP2 tmPrepared[2]
#else
#define TP2 1
#endif
#if N > 3
#define TP3 tmPrepared[3]
#else
#define TP3 1
#endif
#if N > 4
#define TP4 tmPrepared[4]
#else
#define TP4 1
#endif
#if N > 5
#define TP5 tmPrepared[5]
#else
#define TP5 1
#endif
#if N > 6
#define TP6 tmPrepared[6]
#else
#define TP6 1
#endif
#if N > 7
#define TP7 tmPrepared[7]
#else
#define TP7 1
#endif
#if N > 8
#define TP8 tmPrepared[8]
#else
#define TP8 1
#endif
#if N > 9
#define TP9 tmPrepared[9]
#else
#define TP9 1
#endif
#if N > 10
#define TP10 tmPrepared[10]
#else
#define TP10 1
#endif
#if N > 11
#define TP11 tmPrepared[11]
#else
#define TP11 1
#endif
#define ALLPREPARED (TP0 && TP1 && TP2 && TP3 && TP4 && TP5 && TP6 && TP7 && TP8 && TP9 && TP10 && TP11)

/* the actions of one RM r (and the TM's receipt of its Prepared message) */
#define RM_ACTIONS(r) \
  :: d_step { (!tmDone && msgPrepared[r]) -> tmPrepared[r] = 1 }                      /* TMRcvPrepared(r) */ \
  :: d_step { (rmState[r] == working) -> rmState[r] = prepared; msgPrepared[r] = 1 }  /* RMPrepare(r) */ \
  :: d_step { (rmState[r] == working) -> rmState[r] = aborted }                       /* RMChooseToAbort(r) */ \
  :: d_step { msgCommit -> rmState[r] = committed }                                    /* RMRcvCommitMsg(r) */ \
  :: d_step { msgAbort -> rmState[r] = aborted }                                       /* RMRcvAbortMsg(r) */

active proctype TwoPhase()
{
end:
  do
  :: d_step { (!tmDone && ALLPREPARED) -> tmDone = 1; msgCommit = 1 }                 /* TMCommit */
  :: d_step { !tmDone -> tmDone = 1; msgAbort = 1 }                                   /* TMAbort */
#if N > 0
  RM_ACTIONS(0)
#endif
#if N > 1
  RM_ACTIONS(1)
#endif
#if N > 2
  RM_ACTIONS(2)
#endif
#if N > 3
  RM_ACTIONS(3)
#endif
#if N > 4
  RM_ACTIONS(4)
#endif
#if N > 5
  RM_ACTIONS(5)
#endif
#if N > 6
  RM_ACTIONS(6)
#endif
#if N > 7
  RM_ACTIONS(7)
#endif
#if N > 8
  RM_ACTIONS(8)
#endif
#if N > 9
  RM_ACTIONS(9)
#endif
#if N > 10
  RM_ACTIONS(10)
#endif
#if N > 11
  RM_ACTIONS(11)
#endif
  od
}

/* TCConsistent: no RM has committed while another has aborted (checked as an assertion-free
 * safety run here; the timing compares state-space exploration only). */
