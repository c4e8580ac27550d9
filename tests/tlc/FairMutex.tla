---- MODULE FairMutex ----
\* Processes share one semaphore: each requests, enters and leaves a critical section.
\* Three specifications differ only in fairness: none, weak per process, strong per process.
\* tests/models/fair_mutex.py is the same model as tables (tests/test_liveness.py compares verdicts).
EXTENDS Naturals
CONSTANT N
Proc == 1..N
VARIABLES pc, free
vars == <<pc, free>>

Init == pc = [p \in Proc |-> "idle"] /\ free = TRUE
Request(p) == pc[p] = "idle" /\ pc' = [pc EXCEPT ![p] = "waiting"] /\ UNCHANGED free
Enter(p) == pc[p] = "waiting" /\ free /\ pc' = [pc EXCEPT ![p] = "critical"] /\ free' = FALSE
Exit(p) == pc[p] = "critical" /\ pc' = [pc EXCEPT ![p] = "idle"] /\ free' = TRUE
Proc_(p) == Request(p) \/ Enter(p) \/ Exit(p)
Next == \E p \in Proc: Proc_(p)

Unfair == Init /\ [][Next]_vars
Weak == Unfair /\ \A p \in Proc: WF_vars(Proc_(p))
Strong == Unfair /\ \A p \in Proc: SF_vars(Proc_(p))
WeakNext == Unfair /\ WF_vars(Next)

SomeoneEnters == <>(\E p \in Proc: pc[p] = "critical")
NoStarvation == (\E p \in Proc: pc[p] = "waiting") ~> (\E p \in Proc: pc[p] = "critical")
FirstEnters == (pc[1] = "waiting") ~> (pc[1] = "critical")
====
