---- MODULE Commit ----
\* Two-phase commit as in Lamport's TwoPhase (messages are a set that only grows), with a
\* termination property: every resource manager ends committed or aborted.
\* tests/test_liveness.py checks the shipped twophase spec with the same fairness.
CONSTANT RM
VARIABLES rmState, tmState, tmPrepared, msgs
vars == <<rmState, tmState, tmPrepared, msgs>>

Init == /\ rmState = [r \in RM |-> "working"] /\ tmState = "init"
        /\ tmPrepared = {} /\ msgs = {}
TMRcvPrepared(r) == /\ tmState = "init" /\ [type |-> "Prepared", rm |-> r] \in msgs
                    /\ tmPrepared' = tmPrepared \cup {r} /\ UNCHANGED <<rmState, tmState, msgs>>
TMCommit == /\ tmState = "init" /\ tmPrepared = RM /\ tmState' = "done"
            /\ msgs' = msgs \cup {[type |-> "Commit"]} /\ UNCHANGED <<rmState, tmPrepared>>
TMAbort == /\ tmState = "init" /\ tmState' = "done"
           /\ msgs' = msgs \cup {[type |-> "Abort"]} /\ UNCHANGED <<rmState, tmPrepared>>
RMPrepare(r) == /\ rmState[r] = "working" /\ rmState' = [rmState EXCEPT ![r] = "prepared"]
                /\ msgs' = msgs \cup {[type |-> "Prepared", rm |-> r]} /\ UNCHANGED <<tmState, tmPrepared>>
RMChooseToAbort(r) == /\ rmState[r] = "working" /\ rmState' = [rmState EXCEPT ![r] = "aborted"]
                      /\ UNCHANGED <<tmState, tmPrepared, msgs>>
RMRcvCommitMsg(r) == /\ [type |-> "Commit"] \in msgs /\ rmState' = [rmState EXCEPT ![r] = "committed"]
                     /\ UNCHANGED <<tmState, tmPrepared, msgs>>
RMRcvAbortMsg(r) == /\ [type |-> "Abort"] \in msgs /\ rmState' = [rmState EXCEPT ![r] = "aborted"]
                    /\ UNCHANGED <<tmState, tmPrepared, msgs>>
TM == TMCommit \/ TMAbort \/ \E r \in RM: TMRcvPrepared(r)
RMAct(r) == RMPrepare(r) \/ RMChooseToAbort(r) \/ RMRcvCommitMsg(r) \/ RMRcvAbortMsg(r)
Next == TM \/ \E r \in RM: RMAct(r)

Unfair == Init /\ [][Next]_vars
WeakNext == Unfair /\ WF_vars(Next)
WeakRMOnly == Unfair /\ \A r \in RM: WF_vars(RMAct(r))

Termination == <>(\A r \in RM: rmState[r] \in {"committed", "aborted"})
AllCommit == <>(\A r \in RM: rmState[r] = "committed")
PreparedDecides == (\E r \in RM: rmState[r] = "prepared") ~> (tmState = "done")
====
