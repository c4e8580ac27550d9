"""The row parameters the Kafka tables, the sequence chart and the variants share.

A parameter is bound by its name when a row is grounded, so one declaration serves every table
that names an incarnation, a partition, a transaction, a transactional id or a coordinator epoch.
"""
from txncheck.spec.expr import Param

from .domains import Bat, CEpoch, Inc, Part, Tid, Txn, tid_of

i = Param("i", Inc)  # a producer incarnation
p = Param("p", Part)  # a partition (with ctp, partition `parts` is the group's __consumer_offsets partition)
k = Param("k", Txn)  # a transaction of an incarnation's script
b = Param("b", Bat)  # a batch of that transaction to a partition (config `batches`)
t = Param("t", Tid)  # a transactional id
c = Param("c", CEpoch)  # a coordinator epoch
T = tid_of(i)  # the transactional id of incarnation i
