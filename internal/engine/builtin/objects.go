package builtin

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/object"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// Objects are the objects of a builtin target's server, in the order the engine creates them:
// the connection Secret with the given passwords, the ConfigMap with my.cnf, the headless
// Service, the NetworkPolicy (unless spec.networkPolicy is Disabled; before the StatefulSet, so
// the server is never reachable by more than its run's sysbench pods where the CNI enforces
// NetworkPolicy) and the StatefulSet, whose pod avoids the peers' (specs.DatabasePlacement). It
// fails when the target's myCnf would break the run (specs.CheckMyCnf).
func Objects(run *v1.BenchmarkRun, t v1.Target, rootPassword, password string, peers ...specs.Peer) ([]object.Object, error) {
	cm, err := ConfigMap(run, t)
	if err != nil {
		return nil, err
	}
	objs := []object.Object{ConnectionSecret(run, t.Name, rootPassword, password), cm, Service(run, t.Name)}
	if run.Spec.NetworkPolicyEnabled() {
		objs = append(objs, specs.ServerNetworkPolicy(run, t.Name))
	}
	return append(objs, StatefulSet(run, t, peers...)), nil
}

// The builtin server's contract with the official mysql, percona/percona-server and mariadb
// images. The image's entrypoint creates the benchmark account (specs.BenchmarkUser) with all
// privileges on its database, and the ConfigMap's GrantsKey script narrows them to
// sysbench.Privileges.
const (
	// ServerContainer is the name of the builtin server's container.
	ServerContainer = "mysql"
	dataVolume      = "data"
	configVolume    = "config"
	socketVolume    = "run"
	tmpVolume       = "tmp"
	filesVolume     = "files"
	// DataMountPath is where the data volume is mounted, and DataDir the server's datadir one
	// level below it: a freshly formatted volume's root holds lost+found, and MySQL's
	// --initialize refuses a datadir with files in it. The images' entrypoints create DataDir
	// (reading datadir from the config, as they do for /var/lib/mysql).
	DataMountPath = "/var/lib/mysql-data"
	DataDir       = DataMountPath + "/mysql"
	// serverUID and serverGroup run the server: the mysql user of the official mysql and mariadb
	// images (and the project's). The group also owns every writable volume (fsGroup), so images
	// whose own server user differs (percona/percona-server's is 1001) work as well.
	serverUID   = 999
	serverGroup = 999

	// SocketDir holds the server's socket, its lock files and the images' pid file; SocketPath
	// is the socket OperatorMyCnf sets. /var/run is /run in every supported image.
	SocketDir  = "/var/run/mysqld"
	SocketPath = SocketDir + "/mysqld.sock"
	// tmpDir is the server's tmpdir (its default) and the entrypoints' mktemp directory.
	tmpDir = "/tmp"
	// filesDir is secure-file-priv of the mysql and percona/percona-server images: MySQL 8
	// refuses to start when it cannot access it, and in percona/percona-server it belongs to
	// that image's own mysql user. The benchmark account has no FILE privilege, so nothing is
	// ever written there.
	filesDir = "/var/lib/mysql-files"
	// GrantsKey is the server ConfigMap's SQL script, run by the image's entrypoint once after
	// it created the benchmark account (/docker-entrypoint-initdb.d): it narrows the account's
	// privileges to what sysbench needs (sysbench.GrantSQL).
	GrantsKey       = "mysqlbench-grants.sql"
	initdbGrantPath = "/docker-entrypoint-initdb.d/" + GrantsKey
)

// Size limits of the server's small writable volumes. The data volume's, without spec.storage,
// is DataEmptyDirLimit.
var (
	// tmpLimit: MySQL 8's TempTable engine spills up to temptable_max_mmap (1GiB by default)
	// into tmpdir, and sorts and MariaDB's on-disk temporary tables go there too.
	tmpLimit = resource.MustParse("2Gi")
	// smallLimit: a socket, lock and pid files, and the never-used secure-file-priv directory.
	smallLimit = resource.MustParse("16Mi")
)

// Include directories of the supported images: the official mysql and mariadb images read
// /etc/mysql/conf.d, the percona/percona-server images /etc/my.cnf.d. The config files are
// mounted one by one (subPath) so that files the image ships there stay visible.
var includeDirs = []string{"/etc/mysql/conf.d", "/etc/my.cnf.d"}

// ConnectionSecret holds a builtin target's generated credentials, in the keys sysbench Jobs
// read (sysbench.SecretKey*) plus the root password. The caller generates the passwords once and
// never rewrites them.
func ConnectionSecret(run *v1.BenchmarkRun, target, rootPassword, password string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:      specs.ConnectionSecretName(run, target),
			Namespace: run.Namespace,
			Labels:    specs.TargetLabels(run, target),
		},
		Type: corev1.SecretTypeOpaque,
		StringData: map[string]string{
			sysbench.SecretKeyHost:      Host(run, target),
			sysbench.SecretKeyPort:      strconv.Itoa(specs.MySQLPort),
			sysbench.SecretKeyUser:      specs.BenchmarkUser,
			sysbench.SecretKeyPassword:  password,
			sysbench.SecretKeyDatabase:  specs.BenchmarkDatabase,
			specs.SecretKeyRootPassword: rootPassword,
		},
	}
}

// Host is the DNS name of a builtin server: its pod through the headless Service.
func Host(run *v1.BenchmarkRun, target string) string {
	name := specs.ServerName(run, target)
	return fmt.Sprintf("%s-0.%s.%s.svc", name, name, run.Namespace)
}

// ConfigMap holds the operator's my.cnf and the target's overrides. It fails when the
// overrides would break the run (specs.CheckMyCnf).
func ConfigMap(run *v1.BenchmarkRun, t v1.Target) (*corev1.ConfigMap, error) {
	if err := specs.CheckMyCnf(run.Spec, t); err != nil {
		return nil, err
	}
	data := map[string]string{
		OperatorCnfKey: OperatorMyCnf(run, t.Name),
		GrantsKey:      sysbench.GrantSQL(specs.BenchmarkUser, "%", specs.BenchmarkDatabase),
	}
	if user := specs.UserMyCnf(t); user != "" {
		data[UserCnfKey] = user
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      specs.ServerName(run, t.Name),
			Namespace: run.Namespace,
			Labels:    specs.TargetLabels(run, t.Name),
		},
		Data: data,
	}, nil
}

// Service is the headless Service that gives the server pod its DNS name.
func Service(run *v1.BenchmarkRun, target string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:      specs.ServerName(run, target),
			Namespace: run.Namespace,
			Labels:    specs.TargetLabels(run, target),
		},
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 specs.ServerPodLabels(run, target),
			PublishNotReadyAddresses: true,
			Ports: []corev1.ServicePort{{
				Name: "mysql", Port: specs.MySQLPort, TargetPort: intstr.FromInt32(specs.MySQLPort), Protocol: corev1.ProtocolTCP,
			}},
		},
	}
}

// StatefulSet runs a builtin target's server: one pod from the target's image, configured
// through the images' environment contract, on the database pool. The pod meets the restricted
// Pod Security Standard: the server runs as uid/gid 999 without capabilities, on a read-only root
// filesystem with four writable volumes (the data, SocketDir, /tmp and /var/lib/mysql-files),
// each with a size limit. root is root@localhost only (MYSQL_ROOT_HOST), reachable through the
// socket from inside the pod and never from the network, and the benchmark account keeps only
// sysbench.Privileges on its database (GrantsKey). Its pod avoids the peers' pods
// (specs.DatabasePlacement).
func StatefulSet(run *v1.BenchmarkRun, t v1.Target, peers ...specs.Peer) *appsv1.StatefulSet {
	name := specs.ServerName(run, t.Name)
	secret := specs.ConnectionSecretName(run, t.Name)
	labels := specs.ServerPodLabels(run, t.Name)

	fromSecret := func(env, key string) corev1.EnvVar {
		return corev1.EnvVar{Name: env, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key,
		}}}
	}
	var env []corev1.EnvVar
	// The mysql and percona images read MYSQL_*, the mariadb images MARIADB_* (and MYSQL_* as a
	// fallback); setting both serves every image.
	for _, prefix := range []string{"MYSQL_", "MARIADB_"} {
		env = append(env,
			fromSecret(prefix+"ROOT_PASSWORD", specs.SecretKeyRootPassword),
			// No root account for other hosts: root logs in through the socket only.
			corev1.EnvVar{Name: prefix + "ROOT_HOST", Value: "localhost"},
			corev1.EnvVar{Name: prefix + "DATABASE", Value: specs.BenchmarkDatabase},
			corev1.EnvVar{Name: prefix + "USER", Value: specs.BenchmarkUser},
			fromSecret(prefix+"PASSWORD", sysbench.SecretKeyPassword),
		)
	}
	// percona/percona-server images report to Percona at start unless told not to; a benchmark
	// server has no business calling out (and its root filesystem is read-only).
	env = append(env, corev1.EnvVar{Name: "PERCONA_TELEMETRY_DISABLE", Value: "1"})

	mounts := []corev1.VolumeMount{
		{Name: dataVolume, MountPath: DataMountPath},
		{Name: socketVolume, MountPath: SocketDir},
		{Name: tmpVolume, MountPath: tmpDir},
		{Name: filesVolume, MountPath: filesDir},
		{Name: configVolume, MountPath: initdbGrantPath, SubPath: GrantsKey, ReadOnly: true},
	}
	for _, dir := range includeDirs {
		for _, key := range []string{OperatorCnfKey, UserCnfKey} {
			if key == UserCnfKey && specs.UserMyCnf(t) == "" {
				continue
			}
			mounts = append(mounts, corev1.VolumeMount{
				Name: configVolume, MountPath: dir + "/" + key, SubPath: key, ReadOnly: true,
			})
		}
	}

	container := corev1.Container{
		Name:  ServerContainer,
		Image: t.Image,
		Env:   env,
		Ports: []corev1.ContainerPort{{Name: "mysql", ContainerPort: specs.MySQLPort, Protocol: corev1.ProtocolTCP}},
		// The entrypoints listen on TCP only once initialization (database, users, my.cnf) is
		// done; the operator then proves the benchmark account works with a probe Job.
		ReadinessProbe: &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(specs.MySQLPort)}},
			PeriodSeconds:    2,
			FailureThreshold: 3,
		},
		VolumeMounts: mounts,
		// The servers log to stderr and write no termination message: without the log tail a
		// crash-looping server's status (and so the target's failure message) says nothing.
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			ReadOnlyRootFilesystem:   ptr.To(true),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
	}
	if t.Resources != nil {
		container.Resources = *t.Resources
	}

	emptyDir := func(name string, limit resource.Quantity) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
			EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(limit)},
		}}
	}
	pod := corev1.PodSpec{
		Containers:                    []corev1.Container{container},
		TerminationGracePeriodSeconds: ptr.To[int64](60),
		AutomountServiceAccountToken:  ptr.To(false),
		EnableServiceLinks:            ptr.To(false),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:        ptr.To(true),
			RunAsUser:           ptr.To[int64](serverUID),
			RunAsGroup:          ptr.To[int64](serverGroup),
			FSGroup:             ptr.To[int64](serverGroup),
			FSGroupChangePolicy: ptr.To(corev1.FSGroupChangeOnRootMismatch),
			SeccompProfile:      &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Volumes: []corev1.Volume{{
			Name: configVolume,
			VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: name},
			}},
		},
			emptyDir(socketVolume, smallLimit),
			emptyDir(tmpVolume, tmpLimit),
			emptyDir(filesVolume, smallLimit),
		},
	}
	specs.DatabasePlacement(run, peers...).Apply(&pod)

	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: run.Namespace, Labels: specs.TargetLabels(run, t.Name)},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To[int32](1),
			ServiceName:         name,
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       pod,
			},
		},
	}
	if st := run.Spec.Storage; st != nil {
		sts.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
			ObjectMeta: metav1.ObjectMeta{Name: dataVolume, Labels: specs.TargetLabels(run, t.Name)},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName: st.StorageClassName,
				Resources: corev1.VolumeResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceStorage: st.Size.DeepCopy()},
				},
			},
		}}
		// Deleting the target's server deletes its data too.
		sts.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
			WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
			WhenScaled:  appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
		}
	} else {
		sts.Spec.Template.Spec.Volumes = append(sts.Spec.Template.Spec.Volumes, emptyDir(dataVolume, DataEmptyDirLimit(run.Spec, t)))
	}
	return sts
}
