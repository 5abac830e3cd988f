package server

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

func serverPod(mutate func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pk-lookup-mysql57-0", Namespace: "bench"},
		Status: corev1.PodStatus{
			Phase: corev1.PodPending,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
			},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "mysql", Image: "mysql:5.7.44"}},
		},
	}
	mutate(p)
	return p
}

func TestPodState(t *testing.T) {
	crashLog := "2026-11-22 [Note] starting\n2026-11-22 [ERROR] unknown variable 'innodb_bufer_pool_size=2G'\n2026-11-22 [ERROR] Aborting\n"
	tests := []struct {
		name        string
		pod         *corev1.Pod
		want        State
		wantMessage []string // substrings of Message
		wantExit    int32    // the ordinal of the earliest exit reported; 0: none
	}{
		{
			name: "unschedulable keeps the scheduler's message",
			pod: serverPod(func(p *corev1.Pod) {
				p.Status.Conditions = []corev1.PodCondition{{
					Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
					Message: "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.",
				}}
				p.Status.ContainerStatuses = nil
			}),
			want:        State{Reason: v1.ReasonUnschedulable},
			wantMessage: []string{"pk-lookup-mysql57-0", "cannot be scheduled", "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."},
		},
		{
			name: "ready but being deleted: not ready, a new pod comes",
			pod: serverPod(func(p *corev1.Pod) {
				p.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			}),
			want:        State{Reason: v1.ReasonStarting},
			wantMessage: []string{"pk-lookup-mysql57-0", "being deleted"},
		},
		{
			name: "not yet scheduled, no reason: starting",
			pod: serverPod(func(p *corev1.Pod) {
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse}}
				p.Status.ContainerStatuses = nil
			}),
			want:        State{Reason: v1.ReasonStarting},
			wantMessage: []string{"pk-lookup-mysql57-0", "starting", "Pending"},
		},
		{
			name: "ErrImagePull",
			pod: serverPod(func(p *corev1.Pod) {
				p.Status.ContainerStatuses[0].Image = "mysql:5.7.99"
				p.Status.ContainerStatuses[0].State.Waiting = &corev1.ContainerStateWaiting{
					Reason: "ErrImagePull", Message: `rpc error: manifest for mysql:5.7.99 not found`,
				}
			}),
			want:        State{Reason: v1.ReasonImagePull, Failed: true},
			wantMessage: []string{"cannot pull image mysql:5.7.99", "manifest for mysql:5.7.99 not found"},
		},
		{
			name: "ErrImagePull from containerd: no such tag fails at once",
			pod: serverPod(func(p *corev1.Pod) {
				p.Status.ContainerStatuses[0].Image = "mariadb:does-not-exist-99"
				p.Status.ContainerStatuses[0].State.Waiting = &corev1.ContainerStateWaiting{
					Reason: "ErrImagePull", Message: `failed to pull and unpack image "docker.io/library/mariadb:does-not-exist-99": ` +
						`failed to resolve reference "docker.io/library/mariadb:does-not-exist-99": docker.io/library/mariadb:does-not-exist-99: not found`,
				}
			}),
			want:        State{Reason: v1.ReasonImagePull, Failed: true},
			wantMessage: []string{"cannot pull image mariadb:does-not-exist-99", "not found"},
		},
		{
			name: "ErrImagePull: access denied fails at once",
			pod: serverPod(func(p *corev1.Pod) {
				p.Status.ContainerStatuses[0].State.Waiting = &corev1.ContainerStateWaiting{
					Reason: "ErrImagePull", Message: `pull access denied for private/mysql, repository does not exist or may require 'docker login'`,
				}
			}),
			want: State{Reason: v1.ReasonImagePull, Failed: true},
		},
		{
			name: "ErrImagePull: a network error is waited out",
			pod: serverPod(func(p *corev1.Pod) {
				p.Status.ContainerStatuses[0].State.Waiting = &corev1.ContainerStateWaiting{
					Reason: "ErrImagePull", Message: `failed to do request: Head "https://registry-1.docker.io/v2/library/mysql/manifests/8.4": dial tcp 54.1.1.1:443: i/o timeout`,
				}
			}),
			want: State{Reason: v1.ReasonImagePull},
		},
		{
			name: "ErrImagePull: a rate limit is waited out",
			pod: serverPod(func(p *corev1.Pod) {
				p.Status.ContainerStatuses[0].State.Waiting = &corev1.ContainerStateWaiting{
					Reason: "ErrImagePull", Message: `429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit`,
				}
			}),
			want: State{Reason: v1.ReasonImagePull},
		},
		{
			name: "ImagePullBackOff",
			pod: serverPod(func(p *corev1.Pod) {
				p.Status.ContainerStatuses[0].State.Waiting = &corev1.ContainerStateWaiting{
					Reason: "ImagePullBackOff", Message: `Back-off pulling image "mysql:5.7.44"`,
				}
			}),
			want:        State{Reason: v1.ReasonImagePull},
			wantMessage: []string{"cannot pull image mysql:5.7.44", "Back-off pulling image"},
		},
		{
			name: "InvalidImageName",
			pod: serverPod(func(p *corev1.Pod) {
				p.Status.ContainerStatuses[0].State.Waiting = &corev1.ContainerStateWaiting{Reason: "InvalidImageName", Message: "bad"}
			}),
			want: State{Reason: v1.ReasonImagePull, Failed: true},
		},
		{
			name: "CreateContainerConfigError",
			pod: serverPod(func(p *corev1.Pod) {
				p.Status.ContainerStatuses[0].State.Waiting = &corev1.ContainerStateWaiting{
					Reason: "CreateContainerConfigError", Message: `secret "pk-lookup-mysql57-credentials" not found`,
				}
			}),
			want:        State{Reason: v1.ReasonConfig},
			wantMessage: []string{"CreateContainerConfigError: ", `secret "pk-lookup-mysql57-credentials" not found`},
		},
		{
			name: "CreateContainerError",
			pod: serverPod(func(p *corev1.Pod) {
				p.Status.ContainerStatuses[0].State.Waiting = &corev1.ContainerStateWaiting{Reason: "CreateContainerError", Message: "mount failed"}
			}),
			want:        State{Reason: v1.ReasonConfig},
			wantMessage: []string{"CreateContainerError: mount failed"},
		},
		{
			name: "crash loop: failed with the last lines of the log",
			pod: serverPod(func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodRunning
				cs := &p.Status.ContainerStatuses[0]
				cs.RestartCount = 3
				cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container"}
				cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: crashLog}
			}),
			want: State{Failed: true, Reason: v1.ReasonCrashing},
			wantMessage: []string{"exited 4 times", "the last time with code 1",
				": [ERROR] unknown variable 'innodb_bufer_pool_size=2G' | [ERROR] Aborting"},
			wantExit: 4,
		},
		{
			name: "crash loop without a message",
			pod: serverPod(func(p *corev1.Pod) {
				cs := &p.Status.ContainerStatuses[0]
				cs.RestartCount = 5
				cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}
			}),
			want:        State{Failed: true, Reason: v1.ReasonCrashing},
			wantMessage: []string{"exited 5 times", "the last time with code 137", "(none)"},
			wantExit:    5,
		},
		{
			name: "terminated now after 3 restarts",
			pod: serverPod(func(p *corev1.Pod) {
				cs := &p.Status.ContainerStatuses[0]
				cs.RestartCount = 3
				cs.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: 2, Message: "bad option"}
			}),
			want:        State{Failed: true, Reason: v1.ReasonCrashing},
			wantMessage: []string{"exited 4 times", "the last time with code 2: bad option"},
			wantExit:    4,
		},
		{
			name: "one restart: not failed yet",
			pod: serverPod(func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodRunning
				cs := &p.Status.ContainerStatuses[0]
				cs.RestartCount = 1
				cs.State.Running = &corev1.ContainerStateRunning{}
				cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Message: crashLog}
			}),
			// Not failed yet, but the first exit is there to keep: the restart may fail on
			// what it left behind.
			want:        State{Reason: v1.ReasonCrashing},
			wantMessage: []string{"exited once", "code 1", "unknown variable 'innodb_bufer_pool_size=2G'"},
			wantExit:    1,
		},
		{
			name: "two restarts, back-off: not failed yet",
			pod: serverPod(func(p *corev1.Pod) {
				cs := &p.Status.ContainerStatuses[0]
				cs.RestartCount = 2
				cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}
				cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Message: crashLog}
			}),
			want:        State{Reason: v1.ReasonCrashing},
			wantMessage: []string{"exited 3 times"},
			wantExit:    3,
		},
		{
			name: "first exit still shown next to a later one: both in the failure, the first kept",
			pod: serverPod(func(p *corev1.Pod) {
				cs := &p.Status.ContainerStatuses[0]
				cs.RestartCount = 3
				cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1,
					Message: "[ERROR] [MY-013797] [Server] Option --authentication-policy is set to an invalid value.\n[ERROR] [MY-010119] [Server] Aborting\n"}
				cs.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1,
					Message: "[ERROR] [MY-010735] [Server] Table 'mysql.user' doesn't exist\n"}
			}),
			want: State{Failed: true, Reason: v1.ReasonCrashing},
			wantMessage: []string{"exited 4 times", "exit 3 (code 1): [ERROR] [MY-013797]",
				"the last one (code 1): [ERROR] [MY-010735] [Server] Table 'mysql.user' doesn't exist"},
			wantExit: 3,
		},
		{
			name: "terminated before the first restart: exit 1",
			pod: serverPod(func(p *corev1.Pod) {
				cs := &p.Status.ContainerStatuses[0]
				cs.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Message: "[ERROR] first\n"}
			}),
			want:        State{Reason: v1.ReasonCrashing},
			wantMessage: []string{"exited once", "[ERROR] first"},
			wantExit:    1,
		},
		{
			name: "ready",
			pod: serverPod(func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodRunning
				p.Status.ContainerStatuses[0].State.Running = &corev1.ContainerStateRunning{}
				p.Status.ContainerStatuses[0].Ready = true
				p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
			}),
			want: State{Ready: true},
		},
		{
			name: "ready after one restart",
			pod: serverPod(func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodRunning
				cs := &p.Status.ContainerStatuses[0]
				cs.RestartCount = 1
				cs.State.Running = &corev1.ContainerStateRunning{}
				cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1}
				p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
			}),
			want:     State{Ready: true},
			wantExit: 1,
		},
		{
			name: "running, not ready: starting",
			pod: serverPod(func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodRunning
				p.Status.ContainerStatuses[0].State.Running = &corev1.ContainerStateRunning{}
				p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse})
			}),
			want:        State{Reason: v1.ReasonStarting},
			wantMessage: []string{"server pod pk-lookup-mysql57-0 is starting (Running)"},
		},
		{
			name: "pulling the image: starting",
			pod: serverPod(func(p *corev1.Pod) {
				p.Status.ContainerStatuses[0].State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
			}),
			want: State{Reason: v1.ReasonStarting},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := PodState(tc.pod)
			if got.Ready != tc.want.Ready || got.Failed != tc.want.Failed || got.Reason != tc.want.Reason {
				t.Errorf("PodState = %+v, want Ready=%v Failed=%v Reason=%q", got, tc.want.Ready, tc.want.Failed, tc.want.Reason)
			}
			if got.Ready && (got.Reason != "" || got.Message != "") {
				t.Errorf("a ready server has reason %q message %q", got.Reason, got.Message)
			}
			if !got.Ready && got.Message == "" {
				t.Error("a server that is not ready needs a message")
			}
			for _, w := range tc.wantMessage {
				if !strings.Contains(got.Message, w) {
					t.Errorf("message %q lacks %q", got.Message, w)
				}
			}
			switch {
			case tc.wantExit == 0 && got.Exit != nil:
				t.Errorf("Exit = %+v, want none", got.Exit)
			case tc.wantExit != 0 && (got.Exit == nil || got.Exit.Ordinal != tc.wantExit):
				t.Errorf("Exit = %+v, want exit %d", got.Exit, tc.wantExit)
			}
		})
	}
}

// The server's node comes from the pod's binding, whatever its state: the controller reads it
// once the server is ready.
func TestPodStateNode(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"bound", serverPod(func(p *corev1.Pod) { p.Spec.NodeName = "db-2" }), "db-2"},
		{"not scheduled yet", serverPod(func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
		}), ""},
	} {
		if got := PodState(tc.pod).NodeName; got != tc.want {
			t.Errorf("%s: NodeName %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestLastLines(t *testing.T) {
	long := strings.Repeat("x", 1000)
	tests := []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"empty", "", 6, "(none)"},
		{"only a newline", "\n", 6, "(none)"},
		{"one line", "Aborting\n", 6, "Aborting"},
		{"joined with bars", "a\nb\nc", 6, "a | b | c"},
		{"keeps the last n", "1\n2\n3\n4\n5\n6\n7\n8\n", 3, "6 | 7 | 8"},
		{"exactly n", "1\n2\n3", 3, "1 | 2 | 3"},
		{"trailing newlines dropped", "a\nb\n\n\n", 6, "a | b"},
		{"long output cut to its end", long + "END", 6, "..." + strings.Repeat("x", 597) + "END"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := lastLines(tc.in, tc.n); got != tc.want {
				t.Errorf("lastLines = %q, want %q", got, tc.want)
			}
		})
	}
	// A cut inside a multi-byte character keeps the message valid UTF-8.
	for shift := range 4 {
		in := strings.Repeat("x", shift) + strings.Repeat("é", 400) + "🙂"
		got := lastLines(in, 6)
		if !utf8.ValidString(got) {
			t.Errorf("shift %d: lastLines cut a character: %q", shift, got[:10])
		}
		if !strings.HasPrefix(got, "...") || !strings.HasSuffix(got, "é🙂") || len(got) > 3+600 {
			t.Errorf("shift %d: lastLines = %d bytes %q...", shift, len(got), got[:10])
		}
	}
}

func TestPassword(t *testing.T) {
	seen := map[string]bool{}
	for range 50 {
		p, err := Password()
		if err != nil {
			t.Fatal(err)
		}
		if len(p) != 24 {
			t.Errorf("password %q has %d characters, want 24", p, len(p))
		}
		for _, r := range p {
			if !strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", r) {
				t.Errorf("password %q has %q: only letters and digits are safe in env vars, shells and my.cnf", p, r)
			}
		}
		if seen[p] {
			t.Errorf("password %q generated twice", p)
		}
		seen[p] = true
	}
}

func TestServerOutputPrefersErrorLines(t *testing.T) {
	cases := []struct{ name, tail, want string }{
		{"error under help output",
			"2026-11-22 4:50:01 0 [ERROR] mariadbd: unknown variable 'no_such_option=1'\n" +
				"wsrep-sync-wait 0\nwsrep-trx-fragment-unit bytes\n\nTo see what variables a running server is using, type\n",
			"[ERROR] mariadbd: unknown variable 'no_such_option=1'"},
		{"mysql 8 style", "2026-11-22T04:50:01.1Z 0 [ERROR] [MY-000067] [Server] unknown variable 'x=1'.\n" +
			"2026-11-22T04:50:01.1Z 0 [ERROR] [MY-010119] [Server] Aborting\n",
			"[ERROR] [MY-000067] [Server] unknown variable 'x=1'. | [ERROR] [MY-010119] [Server] Aborting"},
		{"old server without [ERROR]", "mysqld: unknown variable 'x=1'\n", "mysqld: unknown variable 'x=1'"},
		{"a repeated error is quoted once", "2026-11-22 4:50:01 0 [ERROR] Aborting\n2026-11-22 4:50:02 0 [ERROR] Aborting\n",
			"[ERROR] Aborting"},
		{"no error lines: the end", "a\nb\nc\n", "a | b | c"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := serverOutput(tc.tail); got != tc.want {
				t.Errorf("serverOutput = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestImageDigestAndPinnedImage(t *testing.T) {
	d := "sha256:" + strings.Repeat("0f", 32)
	for _, c := range []struct{ imageID, want string }{
		{"docker.io/library/mariadb@" + d, d},
		{"docker-pullable://mariadb@" + d, d},
		{"registry.example.com:5000/db/mysql@" + d, d},
		{d, ""}, // a runtime's config digest, not one a registry serves
		{"", ""},
		{"mariadb@sha256:short", ""},
	} {
		if got := ImageDigest(c.imageID); got != c.want {
			t.Errorf("ImageDigest(%q) = %q, want %q", c.imageID, got, c.want)
		}
	}
	for _, c := range []struct{ image, digest, want string }{
		{"mariadb:10.11", d, "mariadb:10.11@" + d},
		{"mariadb", d, "mariadb@" + d},
		{"mariadb:10.11@" + d, "sha256:" + strings.Repeat("1", 64), "mariadb:10.11@" + d},
		{"mariadb:10.11", "", "mariadb:10.11"},
	} {
		if got := PinnedImage(c.image, c.digest); got != c.want {
			t.Errorf("PinnedImage(%q, %q) = %q, want %q", c.image, c.digest, got, c.want)
		}
	}
}
