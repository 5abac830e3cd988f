package specs

import (
	"fmt"
	"math"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// The builtin server's contract with the official mysql, percona/percona-server and mariadb
// images.
const (
	MySQLPort = 3306
	// BenchmarkUser is the account sysbench connects with; the image's entrypoint creates it with
	// all privileges on BenchmarkDatabase.
	BenchmarkUser     = "sbtest"
	BenchmarkDatabase = "sbtest"
	// SecretKeyRootPassword holds the generated root password next to the sysbench keys.
	SecretKeyRootPassword = "root-password"

	serverContainer = "mysql"
	dataVolume      = "data"
	configVolume    = "config"
	// DataMountPath is where the data volume is mounted, and DataDir the server's datadir one
	// level below it: a freshly formatted volume's root holds lost+found, and MySQL's
	// --initialize refuses a datadir with files in it. The images' entrypoints create DataDir
	// (reading datadir from the config, as they do for /var/lib/mysql).
	DataMountPath = "/var/lib/mysql-data"
	DataDir       = DataMountPath + "/mysql"
	// dataGroup owns the data volume (fsGroup), so images whose server runs as a non-root user
	// from the start (percona/percona-server) can create DataDir.
	dataGroup = 999
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
			Name:      ConnectionSecretName(run, target),
			Namespace: run.Namespace,
			Labels:    TargetLabels(run, target),
		},
		Type: corev1.SecretTypeOpaque,
		StringData: map[string]string{
			sysbench.SecretKeyHost:     ServerHost(run, target),
			sysbench.SecretKeyPort:     strconv.Itoa(MySQLPort),
			sysbench.SecretKeyUser:     BenchmarkUser,
			sysbench.SecretKeyPassword: password,
			sysbench.SecretKeyDatabase: BenchmarkDatabase,
			SecretKeyRootPassword:      rootPassword,
		},
	}
}

// ServerHost is the DNS name of a builtin server: its pod through the headless Service.
func ServerHost(run *v1.BenchmarkRun, target string) string {
	name := ServerName(run, target)
	return fmt.Sprintf("%s-0.%s.%s.svc", name, name, run.Namespace)
}

// ServerConfigMap holds the operator's my.cnf and the target's overrides. It fails when the
// overrides would break the run (CheckMyCnf).
func ServerConfigMap(run *v1.BenchmarkRun, t v1.Target) (*corev1.ConfigMap, error) {
	if err := CheckMyCnf(run.Spec, t); err != nil {
		return nil, err
	}
	data := map[string]string{OperatorCnfKey: OperatorMyCnf(run, t.Name)}
	if user := UserMyCnf(t); user != "" {
		data[UserCnfKey] = user
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      ServerName(run, t.Name),
			Namespace: run.Namespace,
			Labels:    TargetLabels(run, t.Name),
		},
		Data: data,
	}, nil
}

// ServerService is the headless Service that gives the server pod its DNS name.
func ServerService(run *v1.BenchmarkRun, target string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:      ServerName(run, target),
			Namespace: run.Namespace,
			Labels:    TargetLabels(run, target),
		},
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 ServerPodLabels(run, target),
			PublishNotReadyAddresses: true,
			Ports: []corev1.ServicePort{{
				Name: "mysql", Port: MySQLPort, TargetPort: intstr.FromInt32(MySQLPort), Protocol: corev1.ProtocolTCP,
			}},
		},
	}
}

// ServerStatefulSet runs a builtin target's server: one pod from the target's image, configured
// through the images' environment contract, on the database pool.
func ServerStatefulSet(run *v1.BenchmarkRun, t v1.Target) *appsv1.StatefulSet {
	name := ServerName(run, t.Name)
	secret := ConnectionSecretName(run, t.Name)
	labels := ServerPodLabels(run, t.Name)

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
			fromSecret(prefix+"ROOT_PASSWORD", SecretKeyRootPassword),
			corev1.EnvVar{Name: prefix + "DATABASE", Value: BenchmarkDatabase},
			corev1.EnvVar{Name: prefix + "USER", Value: BenchmarkUser},
			fromSecret(prefix+"PASSWORD", sysbench.SecretKeyPassword),
		)
	}

	mounts := []corev1.VolumeMount{{Name: dataVolume, MountPath: DataMountPath}}
	for _, dir := range includeDirs {
		for _, key := range []string{OperatorCnfKey, UserCnfKey} {
			if key == UserCnfKey && UserMyCnf(t) == "" {
				continue
			}
			mounts = append(mounts, corev1.VolumeMount{
				Name: configVolume, MountPath: dir + "/" + key, SubPath: key, ReadOnly: true,
			})
		}
	}

	container := corev1.Container{
		Name:  serverContainer,
		Image: t.Image,
		Env:   env,
		Ports: []corev1.ContainerPort{{Name: "mysql", ContainerPort: MySQLPort, Protocol: corev1.ProtocolTCP}},
		// The entrypoints listen on TCP only once initialization (database, users, my.cnf) is
		// done; the operator then proves the benchmark account works with a probe Job.
		ReadinessProbe: &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(MySQLPort)}},
			PeriodSeconds:    2,
			FailureThreshold: 3,
		},
		VolumeMounts: mounts,
		// The servers log to stderr and write no termination message: without the log tail a
		// crash-looping server's status (and so the target's failure message) says nothing.
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
	if t.Resources != nil {
		container.Resources = *t.Resources
	}

	pod := corev1.PodSpec{
		Containers:                    []corev1.Container{container},
		TerminationGracePeriodSeconds: ptr.To[int64](60),
		SecurityContext: &corev1.PodSecurityContext{
			FSGroup:             ptr.To[int64](dataGroup),
			FSGroupChangePolicy: ptr.To(corev1.FSGroupChangeOnRootMismatch),
		},
		Volumes: []corev1.Volume{{
			Name: configVolume,
			VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: name},
			}},
		}},
	}
	DatabasePlacement(run).Apply(&pod)

	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: run.Namespace, Labels: TargetLabels(run, t.Name)},
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
			ObjectMeta: metav1.ObjectMeta{Name: dataVolume, Labels: TargetLabels(run, t.Name)},
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
		sts.Spec.Template.Spec.Volumes = append(sts.Spec.Template.Spec.Volumes, corev1.Volume{
			Name: dataVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}},
		})
	}
	return sts
}

// bytesPerRow is the least disk space one sysbench row takes (INT id, INT k, CHAR(120) c,
// CHAR(60) pad, InnoDB's row overhead and the k index); real servers use about 230 bytes.
const bytesPerRow = 200

// CheckDataFits rejects a run whose sbtest data cannot fit the servers' data volume, before any
// server is provisioned: the prepare would otherwise fill the volume and fail with error 1114
// after minutes or hours.
func CheckDataFits(spec v1.BenchmarkRunSpec) error {
	if spec.Storage == nil {
		return nil
	}
	tables, tableSize := int64(max(spec.Workload.Tables, 1)), spec.Workload.TableSize
	if tableSize <= 0 {
		tableSize = 10000
	}
	rows := tables * tableSize
	need := rows * bytesPerRow
	if have := spec.Storage.Size.Value(); have < need {
		return fmt.Errorf("the sbtest data does not fit storage.size %s: workload.tables × workload.tableSize = %d rows "+
			"need at least %s on disk (%d bytes per row; real servers use about 230): raise storage.size to at least %s "+
			"or lower tables or tableSize", spec.Storage.Size.String(), rows, humanBytes(need), bytesPerRow, humanBytes(need*5/4))
	}
	return nil
}

// humanBytes writes n bytes in binary units, rounded up ("1.9Gi").
func humanBytes(n int64) string {
	units := []string{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}
	v, i := float64(n), 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d", n)
	}
	return fmt.Sprintf("%.1f%s", math.Ceil(v*10)/10, units[i])
}
