// Package pool decides the node-pool queue. A server that must be alone on its node (exclusive
// database placement, the default) takes a node of its pool only while the pool has one that no
// server holds and no run created earlier is waiting for; runs wait in the order they were
// created, across namespaces, and a queued run never fails for waiting.
//
// The package does no I/O, like the kube-scheduler's framework (plugins decide, the binder acts):
// the BenchmarkRun reconciler lists the pool's nodes and who holds or waits for them into a
// Snapshot, and acts on the Decision (starts the target, says where it stands, fails it) and on
// the runs Wake names when a node frees.
package pool

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// recheck is how often a queued run near the head of its pool's queue looks at the pool again:
// a freed node wakes the runs next in line (Wake), and the recheck catches what wakes no one (a
// node added or made Ready, a wake-up lost to an error) and refreshes the position a run's status
// shows. Runs further back recheck less often (recheckAfter).
const recheck = 10 * time.Second

// User is a run's target that holds a node of a pool or waits for one.
type User struct {
	// Run is the run's namespace/name.
	Run    string
	Target string
	// Created is when the run was created: the order of the queue.
	Created time.Time
	// Why says, for a holder, what holds the node.
	Why string
	// Exclusive: the run's servers must be alone on their nodes.
	Exclusive bool
}

// Snapshot is a database pool as the reconciler listed it for one decision.
type Snapshot struct {
	// Name is the pool's node selector as Name writes it.
	Name string
	// Matched counts the nodes with the pool's labels, Capacity those of them that can take a
	// server now (Usable).
	Matched, Capacity int
	// Holders hold a node of the pool; Waiting wait for one, oldest first. Decide needs them only
	// for a Request that is Exclusive, on a pool with capacity.
	Holders, Waiting []User
}

// Request is a target that asks for a node of its run's database pool.
type Request struct {
	// Run is the run's namespace/name, Target the target's name.
	Run, Target string
	// Exclusive: the run's servers must be alone on their nodes; the others take no turn.
	Exclusive bool
	// SharesNode: the run's servers share the node its first server took (order Interleaved).
	SharesNode bool
	// Kept are the run's targets whose servers its cleanup policy (Cleanup) keeps.
	Kept    []string
	Cleanup string
	// Since is when the target became one the run works on; Now is the reconciler's clock.
	Since, Now time.Time
	// SchedulingGrace and ReadyTimeout bound the wait for a pool without a usable node.
	SchedulingGrace, ReadyTimeout time.Duration
}

// Verdict is what Decide answers.
type Verdict int

const (
	// Unqueued: the target starts without a turn (its servers need not be alone on a node).
	Unqueued Verdict = iota
	// Admitted: the target takes its turn and starts now.
	Admitted
	// Queued: the target waits for its turn; the message says where it stands.
	Queued
	// NoNodes: no node of the pool can take a server; the message says what is missing, and the
	// target waits, Pending, until one can or its wait is over.
	NoNodes
	// Refused: the target can never start; it fails with the message.
	Refused
)

// Decision is Decide's answer: the verdict, the words for the run's status (Queued, NoNodes) or
// the target's failure (Refused), and when to look again (Queued, NoNodes).
type Decision struct {
	Verdict      Verdict
	Message      string
	RecheckAfter time.Duration
}

// Start says whether the target may start its server now.
func (d Decision) Start() bool { return d.Verdict == Unqueued || d.Verdict == Admitted }

// Decide says whether the target of q may start its server now on the pool s.
func Decide(s Snapshot, q Request) Decision {
	if s.Capacity == 0 {
		return noNodes(s, q)
	}
	if !q.Exclusive {
		return Decision{Verdict: Unqueued}
	}
	if q.SharesNode && slices.ContainsFunc(s.Holders, func(h User) bool { return h.Run == q.Run }) {
		// An interleaved run's servers share the node its first server took.
		return Decision{Verdict: Admitted}
	}
	own := 0
	for _, h := range s.Holders {
		if h.Run == q.Run && slices.Contains(q.Kept, h.Target) {
			own++
		}
	}
	if own >= s.Capacity {
		// Only deleting the run frees its kept servers: waiting would never end.
		return Decision{Verdict: Refused, Message: fmt.Sprintf("target %s needs a node of the database pool %s, "+
			"but this run's own earlier servers, kept by its cleanup policy %q, hold all %d of its Ready node(s): "+
			"set cleanup: Always, or add nodes to the pool", q.Target, s.Name, q.Cleanup, s.Capacity)}
	}
	var ahead []User
	for _, w := range s.Waiting {
		if w.Run == q.Run && w.Target == q.Target {
			break
		}
		ahead = append(ahead, w)
	}
	if len(s.Holders)+len(ahead) < s.Capacity {
		return Decision{Verdict: Admitted}
	}
	return Decision{Verdict: Queued, Message: queuedMessage(q.Target, s.Name, s.Capacity, s.Holders, ahead),
		RecheckAfter: recheckAfter(len(ahead), s.Capacity)}
}

// recheckAfter is when a target queued behind ahead waiters rechecks its pool of capacity nodes:
// recheck for one within a pool's worth of the head, one more recheck for each further pool's
// worth, at most 6: every queued run's recheck reads every run, and a run that many nodes' turns
// away cannot start sooner anyway (its position is up to a minute old then).
func recheckAfter(ahead, capacity int) time.Duration {
	return recheck * time.Duration(min(1+ahead/max(capacity, 1), 6))
}

// queuedMessage says where a queued target stands and what is before it: the runs whose servers
// hold the pool's nodes and the runs created earlier that wait for one, the first few of each
// named (a pool of a hundred nodes would otherwise put a hundred holders in every queued run's
// status, rewritten as they change). With no server up the pool is held by the earlier waiters
// alone (one that has not taken its turn yet, or waits for something else first), and those are
// named instead.
func queuedMessage(target, pool string, capacity int, holders, ahead []User) string {
	const named = 5
	msg := fmt.Sprintf("target %s is queued for the database node pool %s (%d Ready node(s)): position %d",
		target, pool, capacity, len(ahead)+1)
	if len(holders) > 0 {
		held := make([]string, 0, min(len(holders), named))
		for _, h := range holders[:min(len(holders), named)] {
			held = append(held, h.Why)
		}
		msg += "; held by " + strings.Join(held, ", ")
		if len(holders) > named {
			msg += fmt.Sprintf(" and %d more", len(holders)-named)
		}
	} else {
		msg += "; no server holds it yet"
	}
	if len(ahead) > 0 {
		before := make([]string, 0, min(len(ahead), named))
		for _, w := range ahead[:min(len(ahead), named)] {
			before = append(before, fmt.Sprintf("%s (target %s)", w.Run, w.Target))
		}
		list := strings.Join(before, ", ")
		if len(ahead) > named {
			list += fmt.Sprintf(" and %d more", len(ahead)-named)
		}
		msg += fmt.Sprintf("; %d run(s) created earlier wait before it: %s", len(ahead), list)
	}
	return msg
}

// noNodes holds back a target whose pool has no Ready, schedulable node: nothing is provisioned
// that could not be scheduled (a server pod that stays Pending while its run says Provisioning).
// The run says what is missing and the target waits, from when it became one the run works on:
// up to the scheduling grace when no node has the pool's labels at all (a typo in the selector,
// nodes never labelled), up to the server ready timeout when the pool's nodes exist but are
// NotReady or cordoned (a reboot, a drain); then it fails with the same words.
func noNodes(s Snapshot, q Request) Decision {
	desc := "of the database pool " + s.Name
	if s.Name == "" {
		desc = "(placement.database.nodeSelector is empty: any node)"
	}
	var msg string
	limit := q.ReadyTimeout
	if s.Matched == 0 {
		limit = q.SchedulingGrace
		msg = fmt.Sprintf("target %s needs a node %s, and no node has those labels: label the nodes meant for benchmark "+
			"servers (kubectl label node <node> %s), or set placement.database.nodeSelector to labels your nodes have",
			q.Target, desc, strings.ReplaceAll(s.Name, ",", " "))
	} else {
		msg = fmt.Sprintf("target %s needs a node %s, and none of the %d node(s) with its labels is Ready and schedulable: "+
			"bring one back (kubectl get nodes shows NotReady or SchedulingDisabled) or add one", q.Target, desc, s.Matched)
	}
	waited := q.Now.Sub(q.Since)
	if waited >= limit {
		return Decision{Verdict: Refused, Message: fmt.Sprintf("%s (waited %s)", msg, limit)}
	}
	return Decision{Verdict: NoNodes, Message: fmt.Sprintf("%s; nothing is provisioned meanwhile, and the target fails if no "+
		"node is there by %s", msg, q.Since.Add(limit).UTC().Format(time.RFC3339)), RecheckAfter: min(recheck, limit-waited)}
}

// Wake are the runs to wake when a node of the pool s frees: those of the first waiting targets,
// in queue order, as many as the pool has free nodes (a waiter starts while the holders and the
// waiters before it are fewer than the nodes), each run once. Waking every queued run instead
// made each release cost a decision per queued run, each reading every run: quadratic in the
// runs. The runs further back could not start yet; their recheck refreshes their position.
func Wake(s Snapshot) []string {
	free := min(max(s.Capacity-len(s.Holders), 0), len(s.Waiting))
	var runs []string
	woken := map[string]bool{}
	for _, w := range s.Waiting[:free] {
		if !woken[w.Run] {
			woken[w.Run] = true
			runs = append(runs, w.Run)
		}
	}
	return runs
}

// order sorts holders by what holds their node and waiters by the queue's order: the time their
// run was created (to the second), then by namespace and name.
func order(holders, waiting []User) {
	sort.Slice(holders, func(i, j int) bool { return holders[i].Why < holders[j].Why })
	sort.SliceStable(waiting, func(i, j int) bool {
		if !waiting[i].Created.Equal(waiting[j].Created) {
			return waiting[i].Created.Before(waiting[j].Created)
		}
		return waiting[i].Run < waiting[j].Run
	})
}

// Name is a node selector in a stable, readable form ("mysqlbench.io/pool=database").
func Name(selector map[string]string) string {
	parts := make([]string, 0, len(selector))
	for k, v := range selector {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// Usable says whether a node can take a server: Ready and not cordoned.
func Usable(n *corev1.Node) bool {
	if n.Spec.Unschedulable {
		return false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
