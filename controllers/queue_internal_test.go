package controllers

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// A node freed wakes only the runs that may take it: as many waiting targets as there are free
// nodes, from the head of the queue, each run once (a Parallel run may wait with two targets).
func TestNextInLine(t *testing.T) {
	waiting := []poolUser{
		{key: "a/wide", target: "t1"}, {key: "a/wide", target: "t2"},
		{key: "b/late", target: "db"}, {key: "a/last", target: "db"},
	}
	for _, tc := range []struct {
		name string
		free int
		want []string
	}{
		{"no node free", 0, nil},
		{"more holders than nodes (a node cordoned)", -2, nil},
		{"one node: the head", 1, []string{"a/wide"}},
		{"two nodes: both for the head's two targets", 2, []string{"a/wide"}},
		{"three nodes: the next run too", 3, []string{"a/wide", "b/late"}},
		{"more nodes than waiters: every waiter", 9, []string{"a/wide", "b/late", "a/last"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, req := range nextInLine(tc.free, waiting) {
				got = append(got, req.String())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("woke %v, want %v", got, tc.want)
			}
		})
	}
	if got := nextInLine(3, nil); len(got) != 0 {
		t.Errorf("woke %v with nobody waiting", got)
	}
}

// A queued target's message names the first five holders and waiters before it and counts the
// rest: a large pool does not put every holder in every queued run's status.
func TestQueuedMessageNamesTheFirstFive(t *testing.T) {
	users := func(n int, why bool) []poolUser {
		var out []poolUser
		for i := range n {
			u := poolUser{key: fmt.Sprintf("ns/r%d", i), target: "db"}
			if why {
				u.why = fmt.Sprintf("ns/r%d (target db, StatefulSet r%d-db)", i, i)
			}
			out = append(out, u)
		}
		return out
	}
	target := v1.Target{Name: "db"}
	got := queuedMessage(target, "mysqlbench.io/pool=big", 7, users(7, true), users(6, false))
	want := "target db is queued for the database node pool mysqlbench.io/pool=big (7 Ready node(s)): position 7; " +
		"held by ns/r0 (target db, StatefulSet r0-db), ns/r1 (target db, StatefulSet r1-db), ns/r2 (target db, StatefulSet r2-db), " +
		"ns/r3 (target db, StatefulSet r3-db), ns/r4 (target db, StatefulSet r4-db) and 2 more; " +
		"6 run(s) created earlier wait before it: ns/r0 (target db), ns/r1 (target db), ns/r2 (target db), " +
		"ns/r3 (target db), ns/r4 (target db) and 1 more"
	if got != want {
		t.Errorf("message\n%s\nwant\n%s", got, want)
	}
	got = queuedMessage(target, "mysqlbench.io/pool=big", 7, users(5, true), nil)
	if !strings.HasSuffix(got, "held by ns/r0 (target db, StatefulSet r0-db), ns/r1 (target db, StatefulSet r1-db), "+
		"ns/r2 (target db, StatefulSet r2-db), ns/r3 (target db, StatefulSet r3-db), ns/r4 (target db, StatefulSet r4-db)") {
		t.Errorf("five holders: %q, want all five named and no count", got)
	}
}

// A queued target rechecks its pool every queueRecheck near the head of the queue, less often the
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
