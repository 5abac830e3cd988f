package sysbench

import corev1 "k8s.io/api/core/v1"

// CredentialVolumes are the pod volumes that carry the password into a client container (the
// connection Secret's password key alone, mounted at PasswordMountPath, and the memory-backed
// emptyDir at OptionsMountPath for the option file), for clients other than sysbench that handle
// the password the same way (internal/mysqlslap).
func CredentialVolumes(secretName string) []corev1.Volume { return credentialVolumes(secretName) }

// CredentialMounts mounts CredentialVolumes at PasswordMountPath and OptionsMountPath.
func CredentialMounts() []corev1.VolumeMount { return credentialMounts() }

// ConnectionEnv are a client container's connection variables (EnvHost, EnvPort, EnvUser and
// EnvDatabase) from the connection Secret secretName; the database key is optional.
func ConnectionEnv(secretName string) []corev1.EnvVar {
	return []corev1.EnvVar{
		secretEnv(EnvHost, secretName, SecretKeyHost, false),
		secretEnv(EnvPort, secretName, SecretKeyPort, false),
		secretEnv(EnvUser, secretName, SecretKeyUser, false),
		secretEnv(EnvDatabase, secretName, SecretKeyDatabase, true),
	}
}
