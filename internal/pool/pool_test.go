package pool

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// A node freed wakes only the runs that may take it: as many waiting targets as there are free
// nodes, from the head of the queue, each run once (a Parallel run may wait with two targets).
func TestWake(t *testing.T) {
	waiting := []User{
		{Run: "a/wide", Target: "t1"}, {Run: "a/wide", Target: "t2"},
		{Run: "b/late", Target: "db"}, {Run: "a/last", Target: "db"},
	}
	for _, tc := range []struct {
		name              string
		capacity, holders int
		want              []string
	}{
		{"no node free", 2, 2, nil},
		{"more holders than nodes (a node cordoned)", 1, 3, nil},
		{"one node: the head", 3, 2, []string{"a/wide"}},
		{"two nodes: both for the head's two targets", 2, 0, []string{"a/wide"}},
		{"three nodes: the next run too", 4, 1, []string{"a/wide", "b/late"}},
		{"more nodes than waiters: every waiter", 9, 0, []string{"a/wide", "b/late", "a/last"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Wake(Snapshot{Capacity: tc.capacity, Holders: make([]User, tc.holders), Waiting: waiting})
			if !slices.Equal(got, tc.want) {
				t.Errorf("woke %v, want %v", got, tc.want)
			}
		})
	}
	if got := Wake(Snapshot{Capacity: 3}); len(got) != 0 {
		t.Errorf("woke %v with nobody waiting", got)
	}
}

// A queued target's message names the first five holders and waiters before it and counts the
// rest: a large pool does not put every holder in every queued run's status.
func TestQueuedMessageNamesTheFirstFive(t *testing.T) {
	users := func(n int, why bool) []User {
		var out []User
		for i := range n {
			u := User{Run: fmt.Sprintf("ns/r%d", i), Target: "db"}
			if why {
				u.Why = fmt.Sprintf("ns/r%d (target db, StatefulSet r%d-db)", i, i)
			}
			out = append(out, u)
		}
		return out
	}
	got := queuedMessage("db", "mysqlbench.io/pool=big", 7, users(7, true), users(6, false))
	want := "target db is queued for the database node pool mysqlbench.io/pool=big (7 Ready node(s)): position 7; " +
		"held by ns/r0 (target db, StatefulSet r0-db), ns/r1 (target db, StatefulSet r1-db), ns/r2 (target db, StatefulSet r2-db), " +
		"ns/r3 (target db, StatefulSet r3-db), ns/r4 (target db, StatefulSet r4-db) and 2 more; " +
		"6 run(s) created earlier wait before it: ns/r0 (target db), ns/r1 (target db), ns/r2 (target db), " +
		"ns/r3 (target db), ns/r4 (target db) and 1 more"
	if got != want {
		t.Errorf("message\n%s\nwant\n%s", got, want)
	}
	got = queuedMessage("db", "mysqlbench.io/pool=big", 7, users(5, true), nil)
	if !strings.HasSuffix(got, "held by ns/r0 (target db, StatefulSet r0-db), ns/r1 (target db, StatefulSet r1-db), "+
		"ns/r2 (target db, StatefulSet r2-db), ns/r3 (target db, StatefulSet r3-db), ns/r4 (target db, StatefulSet r4-db)") {
		t.Errorf("five holders: %q, want all five named and no count", got)
	}
}

// A queued target rechecks its pool every recheck near the head of the queue, less often the
// more pools' worth of waiters are before it, at most every six.
func TestRecheckAfter(t *testing.T) {
	for _, tc := range []struct {
		ahead, capacity int
		want            time.Duration
	}{
		{0, 1, 10 * time.Second},
		{0, 100, 10 * time.Second},
		{99, 100, 10 * time.Second},
		{100, 100, 20 * time.Second},
		{250, 100, 30 * time.Second},
		{2, 1, 30 * time.Second},
		{899, 100, time.Minute},
		{5000, 1, time.Minute},
		{3, 0, 40 * time.Second}, // no capacity is never queued; no division by zero either
	} {
		if got := recheckAfter(tc.ahead, tc.capacity); got != tc.want {
			t.Errorf("recheckAfter(%d ahead, %d nodes) = %s, want %s", tc.ahead, tc.capacity, got, tc.want)
		}
	}
}

// The decision over a snapshot: a target starts while the holders and the waiters created before
// it are fewer than the pool's usable nodes, waits its turn otherwise, waits for a node when the
// pool has none it can use, and fails when waiting cannot end.
func TestDecide(t *testing.T) {
	now := time.Date(2026, 11, 5, 2, 0, 0, 0, time.UTC)
	held := func(run, target string) User {
		return User{Run: run, Target: target, Exclusive: true, Why: run + " (target " + target + ", StatefulSet x)"}
	}
	waiter := func(run, target string) User { return User{Run: run, Target: target, Exclusive: true} }
	req := func(edit func(*Request)) Request {
		q := Request{Run: "ns/me", Target: "db", Exclusive: true, Cleanup: "OnSuccess", Since: now.Add(-30 * time.Second), Now: now,
			SchedulingGrace: time.Minute, ReadyTimeout: 15 * time.Minute}
		if edit != nil {
			edit(&q)
		}
		return q
	}
	const name = "mysqlbench.io/pool=database"
	for _, tc := range []struct {
		name    string
		snap    Snapshot
		req     Request
		verdict Verdict
		message string // a substring; "" when none
		recheck time.Duration
	}{
		{"a free node", Snapshot{Name: name, Matched: 2, Capacity: 2, Holders: []User{held("ns/other", "db")}}, req(nil), Admitted, "", 0},
		{"its turn: nobody before it", Snapshot{Name: name, Matched: 1, Capacity: 1, Waiting: []User{waiter("ns/me", "db"), waiter("ns/later", "db")}},
			req(nil), Admitted, "", 0},
		{"every node held", Snapshot{Name: name, Matched: 1, Capacity: 1, Holders: []User{held("ns/other", "db")},
			Waiting: []User{waiter("ns/me", "db")}}, req(nil), Queued,
			"target db is queued for the database node pool mysqlbench.io/pool=database (1 Ready node(s)): position 1; held by ns/other (target db, StatefulSet x)",
			recheck},
		{"a run created earlier waits first", Snapshot{Name: name, Matched: 2, Capacity: 2, Holders: []User{held("ns/other", "db")},
			Waiting: []User{waiter("ns/early", "db"), waiter("ns/me", "db")}}, req(nil), Queued,
			"position 2; held by ns/other (target db, StatefulSet x); 1 run(s) created earlier wait before it: ns/early (target db)", recheck},
		{"far back in a small pool rechecks later", Snapshot{Name: name, Matched: 1, Capacity: 1, Holders: []User{held("ns/other", "db")},
			Waiting: []User{waiter("ns/a", "db"), waiter("ns/b", "db"), waiter("ns/me", "db")}}, req(nil), Queued, "position 3", 3 * recheck},
		{"not exclusive: no turn", Snapshot{Name: name, Matched: 1, Capacity: 1, Holders: []User{held("ns/other", "db")}},
			req(func(q *Request) { q.Exclusive = false }), Unqueued, "", 0},
		{"interleaved: its servers share the node it holds", Snapshot{Name: name, Matched: 1, Capacity: 1, Holders: []User{held("ns/me", "first")},
			Waiting: []User{waiter("ns/early", "db")}}, req(func(q *Request) { q.SharesNode = true }), Admitted, "", 0},
		{"sequential: its earlier server holds the node", Snapshot{Name: name, Matched: 1, Capacity: 1, Holders: []User{held("ns/me", "first")}},
			req(nil), Queued, "position 1; held by ns/me (target first, StatefulSet x)", recheck},
		{"its own kept servers hold every node", Snapshot{Name: name, Matched: 1, Capacity: 1, Holders: []User{held("ns/me", "first")}},
			req(func(q *Request) { q.Kept, q.Cleanup = []string{"first"}, "Never" }), Refused,
			`target db needs a node of the database pool mysqlbench.io/pool=database, but this run's own earlier servers, kept by its cleanup policy "Never", hold all 1 of its Ready node(s)`,
			0},
		{"no node has the labels", Snapshot{Name: name}, req(nil), NoNodes,
			"target db needs a node of the database pool mysqlbench.io/pool=database, and no node has those labels: label the nodes meant for " +
				"benchmark servers (kubectl label node <node> mysqlbench.io/pool=database), or set placement.database.nodeSelector to labels " +
				"your nodes have; nothing is provisioned meanwhile, and the target fails if no node is there by 2026-11-05T02:00:30Z",
			recheck},
		{"no node has the labels past the grace", Snapshot{Name: name}, req(func(q *Request) { q.Since = now.Add(-time.Minute) }), Refused,
			"no node has those labels: label the nodes meant for benchmark servers (kubectl label node <node> mysqlbench.io/pool=database), " +
				"or set placement.database.nodeSelector to labels your nodes have (waited 1m0s)", 0},
		{"the pool's nodes NotReady", Snapshot{Name: name, Matched: 2}, req(func(q *Request) { q.Since = now.Add(-14*time.Minute - 55*time.Second) }),
			NoNodes, "none of the 2 node(s) with its labels is Ready and schedulable", 5 * time.Second},
		{"the pool's nodes NotReady past the ready timeout", Snapshot{Name: name, Matched: 2},
			req(func(q *Request) { q.Since = now.Add(-15 * time.Minute) }), Refused, "bring one back (kubectl get nodes shows NotReady or " +
				"SchedulingDisabled) or add one (waited 15m0s)", 0},
		{"an empty selector: any node", Snapshot{}, req(func(q *Request) { q.Exclusive = false }), NoNodes,
			"target db needs a node (placement.database.nodeSelector is empty: any node), and no node has those labels", recheck},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.snap, tc.req)
			if d.Verdict != tc.verdict || d.RecheckAfter != tc.recheck || (tc.message == "") != (d.Message == "") ||
				!strings.Contains(d.Message, tc.message) {
				t.Errorf("Decide = %+v, want verdict %d, recheck %s, message with %q", d, tc.verdict, tc.recheck, tc.message)
			}
			if d.Start() != (tc.verdict == Admitted || tc.verdict == Unqueued) {
				t.Errorf("Start = %v for verdict %d", d.Start(), d.Verdict)
			}
		})
	}
}

// Holders are ordered by what holds them, waiters by when their run was created, then by name.
func TestOrder(t *testing.T) {
	at := time.Date(2026, 11, 5, 2, 0, 0, 0, time.UTC)
	holders := []User{{Why: "ns/b (target db)"}, {Why: "ns/a (target db)"}}
	waiting := []User{{Run: "ns/z", Created: at}, {Run: "ns/y", Created: at.Add(time.Second)}, {Run: "ns/x", Created: at},
		{Run: "ns/x", Target: "second", Created: at}}
	order(holders, waiting)
	if holders[0].Why != "ns/a (target db)" {
		t.Errorf("holders %v, want ns/a first", holders)
	}
	var got []string
	for _, w := range waiting {
		got = append(got, w.Run+"#"+w.Target)
	}
	if want := []string{"ns/x#", "ns/x#second", "ns/z#", "ns/y#"}; !slices.Equal(got, want) {
		t.Errorf("waiting %v, want %v", got, want)
	}
}

// A pool's name is its selector, sorted; a node takes a server when Ready and not cordoned.
func TestNameAndUsable(t *testing.T) {
	if got := Name(map[string]string{"zone": "a", "mysqlbench.io/pool": "database"}); got != "mysqlbench.io/pool=database,zone=a" {
		t.Errorf("Name = %q", got)
	}
	ready := func(s corev1.ConditionStatus, cordoned bool) *corev1.Node {
		return &corev1.Node{Spec: corev1.NodeSpec{Unschedulable: cordoned},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: s}}}}
	}
	for _, tc := range []struct {
		name string
		node *corev1.Node
		want bool
	}{
		{"Ready", ready(corev1.ConditionTrue, false), true},
		{"NotReady", ready(corev1.ConditionFalse, false), false},
		{"cordoned", ready(corev1.ConditionTrue, true), false},
		{"no Ready condition", &corev1.Node{}, false},
	} {
		if got := Usable(tc.node); got != tc.want {
			t.Errorf("%s: Usable = %v, want %v", tc.name, got, tc.want)
		}
	}
}
