package admission_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/mysqlbench/mysqlbench-operator/internal/admission"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
)

// admissionPolicyObjects are a ValidatingAdmissionPolicy named name and a binding of it with action.
func admissionPolicyObjects(name string, action admissionregistrationv1.ValidationAction) []client.Object {
	return []client.Object{
		&admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}},
		&admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
				ValidationActions: []admissionregistrationv1.ValidationAction{action}}},
	}
}

// The manager finds the policy under the names kustomize and the chart give it, and only when a
// binding enforces it (Deny); otherwise it says what is missing.
func TestAdmissionPolicyCheckFindsThePolicyAndItsBinding(t *testing.T) {
	policy := func(name string) client.Object { return admissionPolicyObjects(name, admissionregistrationv1.Deny)[0] }
	binding := func(name string, action admissionregistrationv1.ValidationAction) client.Object {
		return admissionPolicyObjects(name, action)[1]
	}
	cases := []struct {
		name string
		objs []client.Object
		want string // substring of what is missing; "" when in force
	}{
		{"nothing installed", nil, "no ValidatingAdmissionPolicy referenced-objects (or *-referenced-objects) is installed"},
		{"as config/admission names it", []client.Object{policy("referenced-objects"), binding("referenced-objects", admissionregistrationv1.Deny)}, ""},
		{"as kustomize names it", []client.Object{policy("mysqlbench-referenced-objects"), binding("mysqlbench-referenced-objects", admissionregistrationv1.Deny)}, ""},
		{"as the chart names it", []client.Object{policy("mysqlbench-system-mb-referenced-objects"),
			binding("mysqlbench-system-mb-referenced-objects", admissionregistrationv1.Deny)}, ""},
		{"the policy without a binding", []client.Object{policy("mysqlbench-referenced-objects")},
			"the ValidatingAdmissionPolicy mysqlbench-referenced-objects is installed, but no ValidatingAdmissionPolicyBinding enforces it"},
		{"a binding that only warns", []client.Object{policy("mysqlbench-referenced-objects"), binding("mysqlbench-referenced-objects", admissionregistrationv1.Warn)},
			"no ValidatingAdmissionPolicyBinding enforces it"},
		{"another policy of that ending", []client.Object{policy("notreferenced-objects"), binding("notreferenced-objects", admissionregistrationv1.Deny)},
			"no ValidatingAdmissionPolicy referenced-objects"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(testenv.Scheme).WithObjects(tc.objs...).Build()
			got := (&admission.Check{Reader: c}).Absent(context.Background())
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("Absent = %q, want %q", got, tc.want)
			}
		})
	}
}

// The manager says it once, not at every check, and again when it changes.
func TestAdmissionPolicyCheckLogsOnceAndOnChange(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	logged := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), lines...)
	}
	log := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, args)
	}, funcr.Options{})
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme).Build()
	check := &admission.Check{Reader: c, Interval: 10 * time.Millisecond, Log: log}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- check.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	time.Sleep(200 * time.Millisecond) // twenty checks
	if got := logged(); len(got) != 1 || !strings.Contains(got[0], "WARNING: no ValidatingAdmissionPolicy referenced-objects") ||
		!strings.Contains(got[0], "mysqlbench.io/allow-benchmark=true") {
		t.Fatalf("logged %q, want one warning naming the policy and the Secrets' label", got)
	}
	// The binding first: a check between the two creates finds what it found before.
	objs := admissionPolicyObjects("referenced-objects", admissionregistrationv1.Deny)
	for _, o := range []client.Object{objs[1], objs[0]} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(logged()) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	if got := logged(); len(got) != 2 || !strings.Contains(got[1], "the admission policy is installed and enforced") {
		t.Fatalf("logged %q, want the warning, then once that the policy is in force", got)
	}
	if got := check.Absent(ctx); got != "" {
		t.Errorf("Absent = %q after the policy was installed", got)
	}
}
