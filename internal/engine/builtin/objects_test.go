package builtin

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

const (
	testPassword     = "Pw4SysbenchUserXYZ123abc"
	testRootPassword = "RootPwQq7Hh2Kk9Zz0Ww5Ee3"
)

func TestConnectionSecret(t *testing.T) {
	run := newRun()
	s := ConnectionSecret(run, "mysql57", testRootPassword, testPassword)
	if s.Name != "pk-lookup-mysql57-credentials" || s.Namespace != "bench" {
		t.Errorf("Secret %s/%s, want bench/pk-lookup-mysql57-credentials", s.Namespace, s.Name)
	}
	if s.Name != specs.ConnectionSecretName(run, "mysql57") {
		t.Errorf("Secret name %q is not specs.ConnectionSecretName", s.Name)
	}
	if s.Type != corev1.SecretTypeOpaque {
		t.Errorf("type %q, want Opaque", s.Type)
	}
	want := map[string]string{
		"host":          "pk-lookup-mysql57-0.pk-lookup-mysql57.bench.svc",
		"port":          "3306",
		"user":          "sbtest",
		"database":      "sbtest",
		"password":      testPassword,
		"root-password": testRootPassword,
	}
	if !reflect.DeepEqual(s.StringData, want) {
		t.Errorf("StringData = %v, want %v", s.StringData, want)
	}
	if !reflect.DeepEqual(s.Labels, specs.TargetLabels(run, "mysql57")) {
		t.Errorf("labels = %v, want the target's", s.Labels)
	}
}

func TestHostMatchesServiceAndStatefulSet(t *testing.T) {
	run := newRun()
	sts := StatefulSet(run, run.Spec.Targets[0])
	svc := Service(run, "mysql57")
	want := sts.Name + "-0." + svc.Name + "." + run.Namespace + ".svc"
	if got := Host(run, "mysql57"); got != want || sts.Spec.ServiceName != svc.Name {
		t.Errorf("Host = %q, want %q (StatefulSet serviceName %q)", got, want, sts.Spec.ServiceName)
	}
}

func TestConfigMap(t *testing.T) {
	tests := []struct {
		name     string
		myCnf    string
		wantUser string // "" means no user key
		wantErr  string
	}{
		{name: "no myCnf: operator file only"},
		{name: "blank myCnf: operator file only", myCnf: "\n  \n"},
		{name: "user overrides", myCnf: "performance_schema = OFF", wantUser: "[mysqld]\nperformance_schema = OFF\n"},
		{name: "max_connections too low", myCnf: "max_connections = 100", wantErr: "raise it to at least 1002"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := newRun()
			target := v1.Target{Name: "mysql57", Image: "mysql:5.7.44", MyCnf: tc.myCnf}
			cm, err := ConfigMap(run, target)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "mysql57") {
					t.Fatalf("ConfigMap error = %v, want one naming the target and containing %q", err, tc.wantErr)
				}
				if cm != nil {
					t.Errorf("ConfigMap returned an object with its error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cm.Name != specs.ServerName(run, "mysql57") || cm.Namespace != "bench" {
				t.Errorf("ConfigMap %s/%s, want bench/%s", cm.Namespace, cm.Name, specs.ServerName(run, "mysql57"))
			}
			if got := cm.Data[OperatorCnfKey]; got != OperatorMyCnf(run, "mysql57") {
				t.Errorf("%s = %q, want OperatorMyCnf", OperatorCnfKey, got)
			}
			if got, want := cm.Data[GrantsKey], sysbench.GrantSQL("sbtest", "%", "sbtest"); got != want {
				t.Errorf("%s = %q, want %q", GrantsKey, got, want)
			}
			user, ok := cm.Data[UserCnfKey]
			if ok != (tc.wantUser != "") || user != tc.wantUser {
				t.Errorf("%s = %q (present %v), want %q", UserCnfKey, user, ok, tc.wantUser)
			}
			wantKeys := 2
			if tc.wantUser != "" {
				wantKeys = 3
			}
			if len(cm.Data) != wantKeys {
				t.Errorf("unexpected keys: %v", cm.Data)
			}
			if !reflect.DeepEqual(cm.Labels, specs.TargetLabels(run, "mysql57")) {
				t.Errorf("labels = %v", cm.Labels)
			}
		})
	}
	// The user's file sorts after the operator's, so its settings win.
	if OperatorCnfKey >= UserCnfKey {
		t.Errorf("%q must sort before %q", OperatorCnfKey, UserCnfKey)
	}
}

func TestService(t *testing.T) {
	run := newRun()
	svc := Service(run, "mysql57")
	if svc.Name != specs.ServerName(run, "mysql57") || svc.Namespace != "bench" {
		t.Errorf("Service %s/%s", svc.Namespace, svc.Name)
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("clusterIP %q, want None (headless)", svc.Spec.ClusterIP)
	}
	if !svc.Spec.PublishNotReadyAddresses {
		t.Error("publishNotReadyAddresses must be true: the probe Job resolves the pod before it is ready")
	}
	if !reflect.DeepEqual(svc.Spec.Selector, specs.ServerPodLabels(run, "mysql57")) {
		t.Errorf("selector %v, want the server pod labels %v", svc.Spec.Selector, specs.ServerPodLabels(run, "mysql57"))
	}
	wantPorts := []corev1.ServicePort{{Name: "mysql", Port: 3306, TargetPort: intstr.FromInt32(3306), Protocol: corev1.ProtocolTCP}}
	if !reflect.DeepEqual(svc.Spec.Ports, wantPorts) {
		t.Errorf("ports %v, want %v", svc.Spec.Ports, wantPorts)
	}
	// The selector picks this target's server and nothing else of the run.
	sts := StatefulSet(run, run.Spec.Targets[0])
	if !reflect.DeepEqual(svc.Spec.Selector, sts.Spec.Template.Labels) {
		t.Errorf("Service selector %v does not match the StatefulSet's pod labels %v", svc.Spec.Selector, sts.Spec.Template.Labels)
	}
	if reflect.DeepEqual(svc.Spec.Selector, Service(run, "ps80").Spec.Selector) {
		t.Error("two targets' Services select the same pods")
	}
}

func TestStatefulSet(t *testing.T) {
	run := newRun()
	target := run.Spec.Targets[0]
	sts := StatefulSet(run, target)
	name := specs.ServerName(run, "mysql57")
	secret := specs.ConnectionSecretName(run, "mysql57")

	if sts.Name != name || sts.Namespace != "bench" || sts.Spec.ServiceName != name {
		t.Errorf("StatefulSet %s/%s serviceName %s, want %s everywhere", sts.Namespace, sts.Name, sts.Spec.ServiceName, name)
	}
	if sts.Spec.Replicas == nil || *sts.Spec.Replicas != 1 {
		t.Errorf("replicas %v, want 1", sts.Spec.Replicas)
	}
	podLabels := specs.ServerPodLabels(run, "mysql57")
	if !reflect.DeepEqual(sts.Spec.Selector.MatchLabels, podLabels) || !reflect.DeepEqual(sts.Spec.Template.Labels, podLabels) {
		t.Errorf("selector %v / template labels %v, want %v", sts.Spec.Selector.MatchLabels, sts.Spec.Template.Labels, podLabels)
	}
	pod := sts.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.Image != "mysql:5.7.44" {
		t.Errorf("image %q", c.Image)
	}

	t.Run("env", func(t *testing.T) {
		want := map[string]string{ // env -> secret key, or "=value" for literals
			"MYSQL_ROOT_PASSWORD":       "root-password",
			"MYSQL_ROOT_HOST":           "=localhost",
			"MYSQL_PASSWORD":            "password",
			"MYSQL_USER":                "=sbtest",
			"MYSQL_DATABASE":            "=sbtest",
			"MARIADB_ROOT_PASSWORD":     "root-password",
			"MARIADB_ROOT_HOST":         "=localhost",
			"MARIADB_PASSWORD":          "password",
			"MARIADB_USER":              "=sbtest",
			"MARIADB_DATABASE":          "=sbtest",
			"PERCONA_TELEMETRY_DISABLE": "=1",
		}
		got := map[string]string{}
		for _, e := range c.Env {
			switch {
			case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
				if e.Value != "" {
					t.Errorf("%s has both value and valueFrom", e.Name)
				}
				if e.ValueFrom.SecretKeyRef.Name != secret {
					t.Errorf("%s reads Secret %q, want %q", e.Name, e.ValueFrom.SecretKeyRef.Name, secret)
				}
				if o := e.ValueFrom.SecretKeyRef.Optional; o != nil && *o {
					t.Errorf("%s: the password keys must not be optional", e.Name)
				}
				got[e.Name] = e.ValueFrom.SecretKeyRef.Key
			case e.ValueFrom == nil:
				got[e.Name] = "=" + e.Value
			default:
				t.Errorf("%s: unexpected source %v", e.Name, e.ValueFrom)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("env = %v, want %v", got, want)
		}
	})

	t.Run("no credentials in the object", func(t *testing.T) {
		// Build the Secret with known passwords; nothing of it may reach the StatefulSet.
		s := ConnectionSecret(run, "mysql57", testRootPassword, testPassword)
		js := jsonOf(t, sts)
		for _, pw := range []string{s.StringData["password"], s.StringData["root-password"]} {
			if strings.Contains(js, pw) {
				t.Errorf("the StatefulSet contains a password: %s", js)
			}
		}
		for _, e := range c.Env {
			if strings.Contains(e.Name, "PASSWORD") && e.Value != "" {
				t.Errorf("%s has a literal value", e.Name)
			}
		}
	})

	t.Run("config mounts", func(t *testing.T) {
		want := []corev1.VolumeMount{
			{Name: "data", MountPath: DataMountPath},
			{Name: "run", MountPath: "/var/run/mysqld"},
			{Name: "tmp", MountPath: "/tmp"},
			{Name: "files", MountPath: "/var/lib/mysql-files"},
			{Name: "config", MountPath: "/docker-entrypoint-initdb.d/mysqlbench-grants.sql", SubPath: "mysqlbench-grants.sql", ReadOnly: true},
			{Name: "config", MountPath: "/etc/mysql/conf.d/10-mysqlbench-operator.cnf", SubPath: "10-mysqlbench-operator.cnf", ReadOnly: true},
			{Name: "config", MountPath: "/etc/mysql/conf.d/90-mysqlbench-user.cnf", SubPath: "90-mysqlbench-user.cnf", ReadOnly: true},
			{Name: "config", MountPath: "/etc/my.cnf.d/10-mysqlbench-operator.cnf", SubPath: "10-mysqlbench-operator.cnf", ReadOnly: true},
			{Name: "config", MountPath: "/etc/my.cnf.d/90-mysqlbench-user.cnf", SubPath: "90-mysqlbench-user.cnf", ReadOnly: true},
		}
		if !reflect.DeepEqual(c.VolumeMounts, want) {
			t.Errorf("mounts =\n%s\nwant\n%s", jsonOf(t, c.VolumeMounts), jsonOf(t, want))
		}
		var cfg *corev1.Volume
		for i := range pod.Volumes {
			if pod.Volumes[i].Name == "config" {
				cfg = &pod.Volumes[i]
			}
		}
		if cfg == nil || cfg.ConfigMap == nil || cfg.ConfigMap.Name != name {
			t.Errorf("config volume %v, want the ConfigMap %s", cfg, name)
		}
		// Every subPath is a key of the ConfigMap the volume mounts.
		cm, err := ConfigMap(run, target)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range c.VolumeMounts {
			if _, ok := cm.Data[m.SubPath]; m.Name == "config" && !ok {
				t.Errorf("mount %s reads key %q, which the ConfigMap lacks", m.MountPath, m.SubPath)
			}
		}
	})

	t.Run("no user cnf mount without myCnf", func(t *testing.T) {
		bare := target
		bare.MyCnf = ""
		for _, m := range StatefulSet(run, bare).Spec.Template.Spec.Containers[0].VolumeMounts {
			if m.SubPath == UserCnfKey {
				t.Errorf("mounts %s, but the ConfigMap has no such key without myCnf", m.MountPath)
			}
		}
	})

	t.Run("security", func(t *testing.T) {
		psc := pod.SecurityContext
		if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser != 999 ||
			psc.RunAsGroup == nil || *psc.RunAsGroup != 999 || psc.FSGroup == nil || *psc.FSGroup != 999 {
			t.Errorf("pod security context %s, want uid, gid and fsGroup 999, non-root", jsonOf(t, psc))
		}
		if psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("seccomp %v, want RuntimeDefault", psc.SeccompProfile)
		}
		sc := c.SecurityContext
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.ReadOnlyRootFilesystem == nil ||
			!*sc.ReadOnlyRootFilesystem || sc.Capabilities == nil || !reflect.DeepEqual(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) ||
			len(sc.Capabilities.Add) > 0 || sc.Privileged != nil {
			t.Errorf("container security context %s, want no escalation, a read-only root and all capabilities dropped", jsonOf(t, sc))
		}
		if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
			t.Error("the server needs no API token: automountServiceAccountToken must be false")
		}
		if pod.EnableServiceLinks == nil || *pod.EnableServiceLinks {
			t.Error("enableServiceLinks must be false: the server reads no other Service's env")
		}
		// Every writable path is a volume with a size limit; the data volume's is checked below.
		for _, v := range pod.Volumes {
			if v.EmptyDir != nil && (v.EmptyDir.SizeLimit == nil || v.EmptyDir.SizeLimit.IsZero()) {
				t.Errorf("emptyDir %s has no sizeLimit", v.Name)
			}
		}
		for _, m := range c.VolumeMounts {
			if !m.ReadOnly && m.Name == "config" {
				t.Errorf("config mount %s is writable", m.MountPath)
			}
		}
	})

	t.Run("readiness and ports", func(t *testing.T) {
		p := c.ReadinessProbe
		if p == nil || p.TCPSocket == nil || p.TCPSocket.Port != intstr.FromInt32(3306) {
			t.Errorf("readiness probe %v, want TCP on 3306", p)
		}
		wantPorts := []corev1.ContainerPort{{Name: "mysql", ContainerPort: 3306, Protocol: corev1.ProtocolTCP}}
		if !reflect.DeepEqual(c.Ports, wantPorts) {
			t.Errorf("ports %v", c.Ports)
		}
		if c.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
			t.Errorf("terminationMessagePolicy %q: a crash loop would be reported without the server's log", c.TerminationMessagePolicy)
		}
	})

	t.Run("placement and resources", func(t *testing.T) {
		var want corev1.PodSpec
		specs.DatabasePlacement(run).Apply(&want)
		if !reflect.DeepEqual(pod.NodeSelector, want.NodeSelector) || !reflect.DeepEqual(pod.Tolerations, want.Tolerations) ||
			!reflect.DeepEqual(pod.Affinity, want.Affinity) {
			t.Errorf("placement = %s, want %s", jsonOf(t, pod), jsonOf(t, want))
		}
		if !reflect.DeepEqual(c.Resources, *target.Resources) {
			t.Errorf("resources %v, want %v", c.Resources, *target.Resources)
		}
		noRes := target
		noRes.Resources = nil
		if r := StatefulSet(run, noRes).Spec.Template.Spec.Containers[0].Resources; !reflect.DeepEqual(r, corev1.ResourceRequirements{}) {
			t.Errorf("resources without target.resources = %v, want none", r)
		}
	})

	t.Run("persistent storage", func(t *testing.T) {
		if len(sts.Spec.VolumeClaimTemplates) != 1 {
			t.Fatalf("%d claim templates, want 1", len(sts.Spec.VolumeClaimTemplates))
		}
		pvc := sts.Spec.VolumeClaimTemplates[0]
		if pvc.Name != "data" {
			t.Errorf("claim template %q, want data (the mount's volume)", pvc.Name)
		}
		if pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName != "fast-ssd" {
			t.Errorf("storage class %v, want fast-ssd", pvc.Spec.StorageClassName)
		}
		if got := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; got.Cmp(resource.MustParse("20Gi")) != 0 {
			t.Errorf("size %s, want 20Gi", got.String())
		}
		if !reflect.DeepEqual(pvc.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}) {
			t.Errorf("access modes %v", pvc.Spec.AccessModes)
		}
		rp := sts.Spec.PersistentVolumeClaimRetentionPolicy
		if rp == nil || rp.WhenDeleted != appsv1.DeletePersistentVolumeClaimRetentionPolicyType || rp.WhenScaled != appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
			t.Errorf("retention policy %v, want Delete/Delete", rp)
		}
		for _, v := range pod.Volumes {
			if v.Name == "data" {
				t.Errorf("a data volume %v next to the claim template", v)
			}
		}
		// The claim's size is a copy: changing it does not change the run.
		q := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
		q.Add(resource.MustParse("1Gi"))
		if run.Spec.Storage.Size.Cmp(resource.MustParse("20Gi")) != 0 {
			t.Error("the claim template shares the run's quantity")
		}
	})

	t.Run("emptyDir without storage", func(t *testing.T) {
		run := run.DeepCopy()
		run.Spec.Storage = nil
		sts := StatefulSet(run, target)
		if len(sts.Spec.VolumeClaimTemplates) != 0 || sts.Spec.PersistentVolumeClaimRetentionPolicy != nil {
			t.Errorf("claim templates %v / retention %v without spec.storage", sts.Spec.VolumeClaimTemplates, sts.Spec.PersistentVolumeClaimRetentionPolicy)
		}
		var data *corev1.Volume
		for i, v := range sts.Spec.Template.Spec.Volumes {
			if v.Name == "data" {
				data = &sts.Spec.Template.Spec.Volumes[i]
			}
		}
		if data == nil || data.EmptyDir == nil {
			t.Fatalf("data volume %v, want an emptyDir", data)
		}
		if want := DataEmptyDirLimit(run.Spec, target); data.EmptyDir.SizeLimit == nil || data.EmptyDir.SizeLimit.Cmp(want) != 0 {
			t.Errorf("data emptyDir sizeLimit %v, want %s", data.EmptyDir.SizeLimit, want.String())
		}
	})
}

func TestStatefulSetGolden(t *testing.T) {
	run := newRun()
	golden(t, "statefulset.yaml", StatefulSet(run, run.Spec.Targets[0]))
	cm, err := ConfigMap(run, run.Spec.Targets[0])
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "configmap.yaml", cm)
	golden(t, "service.yaml", Service(run, "mysql57"))
}

func TestDataEmptyDirLimit(t *testing.T) {
	const gi = int64(1) << 30
	ladder := func(steps int, step, warmup time.Duration) v1.Ladder {
		l := v1.Ladder{StepDuration: &metav1.Duration{Duration: step}, Warmup: &metav1.Duration{Duration: warmup}}
		for i := range steps {
			l.Threads = append(l.Threads, int32(1)<<i)
		}
		return l
	}
	tests := []struct {
		name     string
		workload v1.Workload
		ladder   v1.Ladder
		reps     int32
		myCnf    string
		want     int64
	}{{
		name:     "repetitions write the binary log of every round",
		workload: v1.Workload{Script: "oltp_read_write", Tables: 4, TableSize: 10000},
		ladder:   ladder(4, time.Minute, 30*time.Second),
		reps:     3,
		want:     4*10000*600 + 2*gi + (30+3*240)*32<<20,
	}, {
		name:     "small read-only data: the floor",
		workload: v1.Workload{Script: "oltp_point_select", Tables: 4, TableSize: 10000},
		ladder:   ladder(4, time.Minute, 0),
		want:     4 * gi,
	}, {
		name:     "defaults: one table of 10000 rows",
		workload: v1.Workload{Script: "select_random_ranges"},
		want:     4 * gi,
	}, {
		name:     "Percona's study: 100 tables of 1M rows, point selects",
		workload: v1.Workload{Script: "oltp_point_select", Tables: 100, TableSize: 1000000},
		ladder:   ladder(11, 5*time.Minute, 5*time.Minute),
		want:     100*1000000*600 + 2*gi,
	}, {
		name:     "a writing workload adds the binary log of the whole ladder",
		workload: v1.Workload{Script: "oltp_read_write", Tables: 4, TableSize: 10000},
		ladder:   ladder(4, time.Minute, 30*time.Second),
		want:     4*10000*600 + 2*gi + 270*32<<20,
	}, {
		name:     "a custom script counts as writing",
		workload: v1.Workload{CustomScript: &v1.ConfigMapKeySelector{Key: "x.lua"}, Tables: 1, TableSize: 1000},
		ladder:   ladder(2, 30*time.Minute, 0),
		// 1000*600 + 2Gi + 3600 s × 32Mi of binary log, beyond the ceiling.
		want: 64 * gi,
	}, {
		name:     "MySQL 8.0.30+ redo capacity from myCnf",
		workload: v1.Workload{Script: "oltp_read_only", Tables: 10, TableSize: 1000000},
		myCnf:    "innodb_redo_log_capacity = 8G",
		want:     10*1000000*600 + 2*gi + 8*gi,
	}, {
		name:     "redo files: size × files in group, the last setting wins",
		workload: v1.Workload{Script: "oltp_read_only", Tables: 10, TableSize: 1000000},
		myCnf:    "[mysqld]\ninnodb-log-file-size = 1G\ninnodb_log_file_size = 2G # for the write test\nloose-innodb_log_files_in_group=3",
		want:     10*1000000*600 + 2*gi + 6*gi,
	}, {
		name:     "default files in group: 2",
		workload: v1.Workload{Script: "oltp_read_only", Tables: 10, TableSize: 1000000},
		myCnf:    "innodb_log_file_size=1024M",
		want:     10*1000000*600 + 2*gi + 2*gi,
	}, {
		// The most rows the CRD admits without spec.storage fit under the ceiling.
		name:     "the largest data the API admits without storage",
		workload: v1.Workload{Script: "oltp_read_only", Tables: 1, TableSize: 110953321},
		ladder:   ladder(64, 24*time.Hour, 24*time.Hour),
		want:     110953321*600 + 2*gi,
	}, {
		name:     "go-tpc: its warehouses, and the binary log of the ladder (TPC-C writes)",
		workload: v1.Workload{Client: v1.ClientGoTPC, TPCC: &v1.TPCCWorkload{Warehouses: 20}},
		ladder:   ladder(4, time.Minute, 30*time.Second),
		want:     20*128<<20 + 64<<20 + 2*gi + 270*32<<20,
	}, {
		name:     "a day-long writing ladder stops at the ceiling",
		workload: v1.Workload{Script: "oltp_insert", Tables: 100, TableSize: 1000000},
		ladder:   ladder(64, 24*time.Hour, 24*time.Hour),
		want:     64 * gi,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := v1.BenchmarkRunSpec{Workload: tc.workload, Ladder: tc.ladder}
			if tc.reps > 0 {
				spec.Repetitions = &tc.reps
			}
			got := DataEmptyDirLimit(spec, v1.Target{Name: "t", MyCnf: tc.myCnf})
			if got.Value() != tc.want {
				t.Errorf("DataEmptyDirLimit = %s (%d), want %d", got.String(), got.Value(), tc.want)
			}
			// It always holds the data specs.CheckDataFits demands of spec.storage.
			spec.Storage = &v1.Storage{Size: got}
			if err := specs.CheckDataFits(spec); err != nil {
				t.Errorf("the limit would not pass specs.CheckDataFits as storage.size: %v", err)
			}
		})
	}
}

func TestObjects(t *testing.T) {
	run := &v1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns"}, Spec: v1.BenchmarkRunSpec{
		Workload: v1.Workload{Script: "oltp_read_only", Tables: 4}, Ladder: v1.Ladder{Threads: []int32{1, 4, 16}}}}
	tg := v1.Target{Name: "b", Image: "mysql:8.4"}
	kinds := func() []string {
		objs, err := Objects(run, tg, "root-pw", "user-pw")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range objs {
			out = append(out, reflect.TypeOf(o).Elem().Name())
		}
		if s := objs[0].(*corev1.Secret); s.StringData[specs.SecretKeyRootPassword] != "root-pw" || s.StringData[sysbench.SecretKeyPassword] != "user-pw" {
			t.Errorf("credentials %v", s.StringData)
		}
		return out
	}
	if got, want := kinds(), []string{"Secret", "ConfigMap", "Service", "NetworkPolicy", "StatefulSet"}; !slices.Equal(got, want) {
		t.Errorf("objects %q, want %q", got, want)
	}
	run.Spec.NetworkPolicy = v1.NetworkPolicyDisabled
	if got, want := kinds(), []string{"Secret", "ConfigMap", "Service", "StatefulSet"}; !slices.Equal(got, want) {
		t.Errorf("objects %q, want %q", got, want)
	}
	tg.MyCnf = "bind-address = 127.0.0.1\n"
	if _, err := Objects(run, tg, "a", "b"); err == nil || !strings.Contains(err.Error(), "sets bind_address") {
		t.Errorf("error %v", err)
	}
}

// The NetworkPolicy selects the server's pod, also for a run name longer than a label value.
func TestNetworkPolicySelectsTheServer(t *testing.T) {
	run := newRun()
	run.Name = strings.Repeat("a-very-long-run-name-", 5)
	np := specs.ServerNetworkPolicy(run, "mysql57")
	selects, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil {
		t.Fatal(err)
	}
	if !selects.Matches(labels.Set(StatefulSet(run, run.Spec.Targets[0]).Spec.Template.Labels)) {
		t.Errorf("the policy does not select the server pod of a run named %q", run.Name)
	}
}
