package specs

import (
	"bufio"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/enginefacts"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// The builtin server's contract with the official mysql, percona/percona-server and mariadb
// images.
const (
	MySQLPort = 3306
	// BenchmarkUser is the account sysbench connects with; the image's entrypoint creates it with
	// all privileges on BenchmarkDatabase, and the server ConfigMap's GrantsKey script narrows
	// them to sysbench.Privileges.
	BenchmarkUser     = "sbtest"
	BenchmarkDatabase = "sbtest"
	// SecretKeyRootPassword holds the generated root password next to the sysbench keys.
	SecretKeyRootPassword = "root-password"

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
	data := map[string]string{
		OperatorCnfKey: OperatorMyCnf(run, t.Name),
		GrantsKey:      sysbench.GrantSQL(BenchmarkUser, "%", BenchmarkDatabase),
	}
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
// through the images' environment contract, on the database pool. The pod meets the restricted
// Pod Security Standard: the server runs as uid/gid 999 without capabilities, on a read-only root
// filesystem with four writable volumes (the data, SocketDir, /tmp and /var/lib/mysql-files),
// each with a size limit. root is root@localhost only (MYSQL_ROOT_HOST), reachable through the
// socket from inside the pod and never from the network, and the benchmark account keeps only
// sysbench.Privileges on its database (GrantsKey). Its pod avoids the peers' pods
// (DatabasePlacement).
func ServerStatefulSet(run *v1.BenchmarkRun, t v1.Target, peers ...Peer) *appsv1.StatefulSet {
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
			// No root account for other hosts: root logs in through the socket only.
			corev1.EnvVar{Name: prefix + "ROOT_HOST", Value: "localhost"},
			corev1.EnvVar{Name: prefix + "DATABASE", Value: BenchmarkDatabase},
			corev1.EnvVar{Name: prefix + "USER", Value: BenchmarkUser},
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
			if key == UserCnfKey && UserMyCnf(t) == "" {
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
	DatabasePlacement(run, peers...).Apply(&pod)

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
		sts.Spec.Template.Spec.Volumes = append(sts.Spec.Template.Spec.Volumes, emptyDir(dataVolume, DataEmptyDirLimit(run.Spec, t)))
	}
	return sts
}

// bytesPerRow is the least disk space one sysbench row takes (INT id, INT k, CHAR(120) c,
// CHAR(60) pad, InnoDB's row overhead and the k index); real servers use about 230 bytes.
const bytesPerRow = 200

// The parts of DataEmptyDirLimit.
const (
	// dataBytesPerRow is what a sysbench row may take in the data volume: the row itself
	// (bytesPerRow; about 230 bytes on real servers, more once updates split pages) and, on
	// servers that write the binary log (MySQL 8.0 and later by default), prepare's INSERTs
	// logged once more (about 200 bytes a row).
	dataBytesPerRow = 3 * bytesPerRow
	// serverFilesBytes is the server's own files beyond the tables: the system, undo and
	// temporary tablespaces, the redo log at its default size (96 to 100MiB), the grant tables.
	serverFilesBytes = 2 << 30
	// binlogBytesPerSecond is the binary log a writing workload may add per second of the
	// ladder: about 1.5KB per oltp_write_only transaction at some 20,000 a second on a fast
	// server.
	binlogBytesPerSecond = 32 << 20
	// dataFloor is the least the limit is.
	dataFloor = 4 << 30
	// dataCeiling is the most: an emptyDir is the node's disk, shared with every other pod
	// there. The CRD refuses data that cannot fit it (tables × tableSize × 600 bytes + 2GiB)
	// without spec.storage; a long writing ladder whose binary log outgrows it is evicted, and the
	// step says so: such a ladder needs spec.storage.
	dataCeiling = 64 << 30
)

// readOnlyScripts are the stock scripts that write nothing after prepare.
var readOnlyScripts = map[v1.OLTPScript]bool{
	"oltp_point_select": true, "oltp_read_only": true, "select_random_points": true, "select_random_ranges": true,
}

// DataEmptyDirLimit is the sizeLimit of a builtin server's data emptyDir when spec.storage is
// unset: the kubelet evicts the pod when the volume grows beyond it, so a runaway server cannot
// fill its node's disk, while a benchmark never comes near it. It is the sum of
//   - 600 bytes per sbtest row (dataBytesPerRow: the tables and prepare's binary log), or what
//     the client says its prepare loads (client.DataBytes: go-tpc's warehouses);
//   - 2GiB for the server's own files (serverFilesBytes);
//   - the redo log the target's myCnf asks for (innodb_redo_log_capacity, or
//     innodb_log_file_size × innodb_log_files_in_group, default 2 files), which the servers
//     allocate in full;
//   - for workloads that write (every stock script but oltp_point_select, oltp_read_only and the
//     select_random_* ones, and any custom script), 32MiB per second of the ladder (all its
//     repetitions), warm-up included, for the binary log;
//
// and at least 4GiB, at most 64GiB. Data that needs more room than the node should give an
// emptyDir belongs on spec.storage.
func DataEmptyDirLimit(spec v1.BenchmarkRunSpec, t v1.Target) resource.Quantity {
	tables, tableSize := int64(max(spec.Workload.Tables, 1)), spec.Workload.TableSize
	if tableSize <= 0 {
		tableSize = 10000
	}
	data := tables * tableSize * dataBytesPerRow
	if b, ok := client.For(spec.Workload).DataBytes(spec.Workload); ok {
		data = b
	}
	limit := data + serverFilesBytes + configuredRedoBytes(t.MyCnf)
	if spec.Workload.CustomScript != nil || !readOnlyScripts[spec.Workload.Script] {
		// Every repetition of the ladder writes its binlog too.
		ladder := spec.Ladder.WarmupDuration() + time.Duration(spec.StepCount())*spec.Ladder.StepDurationOrDefault()
		limit += int64(ladder/time.Second) * binlogBytesPerSecond
	}
	return *resource.NewQuantity(min(max(limit, dataFloor), dataCeiling), resource.BinarySI)
}

// configuredRedoBytes is the redo log a myCnf configures, 0 when it leaves the default: the
// larger of innodb_redo_log_capacity (MySQL 8.0.30 and later) and innodb_log_file_size ×
// innodb_log_files_in_group (2 unless set; MariaDB 10.5 and later keep one file, so this may
// count twice what MariaDB allocates, which only makes the limit roomier). The last setting of an
// option wins, as in the servers; values that are not numbers are ignored (the server rejects
// them itself).
func configuredRedoBytes(myCnf string) int64 {
	var capacity, fileSize int64
	files := int64(2)
	sc := bufio.NewScanner(strings.NewReader(myCnf))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' || line[0] == '[' || line[0] == '!' {
			continue
		}
		name, value, _ := strings.Cut(line, "=")
		name = strings.TrimPrefix(strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "_"), "loose_")
		v, err := parseOptionInt(strings.Trim(strings.TrimSpace(removeEndComment(value)), `"'`))
		if err != nil || v < 0 {
			continue
		}
		switch name {
		case "innodb_redo_log_capacity":
			capacity = int64(v)
		case "innodb_log_file_size":
			fileSize = int64(v)
		case "innodb_log_files_in_group":
			files = int64(v)
		}
	}
	return max(capacity, fileSize*files)
}

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

// CheckTargetData is what the controller checks of a target's data and client before it provisions anything
// for it: what the workload's client needs (client.Validate: an image, options it accepts), so a
// run that cannot measure fails before its servers start, and that the sbtest data fits the data
// volume of a server the operator runs (CheckDataFits); an external server's disk is the user's
// business, and without a prepare step (skipPrepare, a client that makes its own tables) there
// is no sbtest data to fit.
func CheckTargetData(spec v1.BenchmarkRunSpec, t v1.Target) error {
	if err := client.For(spec.Workload).Validate(spec, t); err != nil {
		return err
	}
	if !enginefacts.Of(t.Engine).CreatesServer || !client.Prepares(spec.Workload) {
		return nil
	}
	return CheckDataFits(spec)
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
