package sysbench

import (
	"fmt"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
)

// This file stands in for the kubelet when tests execute an Invocation: it resolves the env the
// way the kubelet does (secretKeyRef from a Secret's data, optional keys skipped, literal values
// with $(VAR) references to earlier variables expanded), expands $(VAR) in command and args, and
// says which files the Secret volumes hold.

// expandK8s implements Kubernetes' $(VAR) expansion: $$ is an escaped $, $(NAME) becomes the
// variable's value when it is defined and stays as written when it is not, any other $ is kept.
func expandK8s(s string, vars map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := vars[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// containerProcess resolves inv against the Secret testSecret (data: its keys) and returns the
// argv and environment the container's process gets.
func containerProcess(inv load.Invocation, data map[string]string) (argv []string, env map[string]string, err error) {
	const secretName = testSecret
	env = map[string]string{}
	for _, e := range inv.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = expandK8s(e.Value, env)
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			if ref.Name != secretName {
				return nil, nil, fmt.Errorf("env %s reads Secret %q, want %q", e.Name, ref.Name, secretName)
			}
			v, ok := data[ref.Key]
			if !ok {
				if ref.Optional != nil && *ref.Optional {
					continue
				}
				return nil, nil, fmt.Errorf("env %s: Secret %s has no key %q (the kubelet would refuse to start the container)", e.Name, secretName, ref.Key)
			}
			env[e.Name] = v
		default:
			return nil, nil, fmt.Errorf("env %s: unsupported valueFrom", e.Name)
		}
	}
	for _, s := range inv.Command {
		argv = append(argv, expandK8s(s, env))
	}
	for _, s := range inv.Args {
		argv = append(argv, expandK8s(s, env))
	}
	return argv, env, nil
}

// mountedFile is a file the kubelet projects into a Secret volume.
type mountedFile struct {
	path    string // inside the container
	content string
	mode    os.FileMode
}

// containerMounts resolves inv's volumes the way the kubelet mounts them: the files of its Secret
// volumes (only the listed items; a missing key of a non-optional volume stops the pod from
// starting) and the directories of its emptyDirs, each fresh per pod.
func containerMounts(inv load.Invocation, data map[string]string) (files []mountedFile, emptyDirs []string, err error) {
	volumes := map[string]corev1.Volume{}
	for _, v := range inv.Volumes {
		volumes[v.Name] = v
	}
	for _, m := range inv.VolumeMounts {
		v, ok := volumes[m.Name]
		if !ok {
			return nil, nil, fmt.Errorf("mount %s names volume %q, which the Invocation lacks", m.MountPath, m.Name)
		}
		switch {
		case v.Secret != nil:
			if v.Secret.SecretName != testSecret {
				return nil, nil, fmt.Errorf("volume %s reads Secret %q, want %q", v.Name, v.Secret.SecretName, testSecret)
			}
			mode := os.FileMode(0o644)
			if v.Secret.DefaultMode != nil {
				mode = os.FileMode(*v.Secret.DefaultMode)
			}
			for _, item := range v.Secret.Items {
				content, ok := data[item.Key]
				if !ok {
					if v.Secret.Optional != nil && *v.Secret.Optional {
						continue
					}
					return nil, nil, fmt.Errorf("volume %s: Secret %s has no key %q (the kubelet would not mount it)", v.Name, testSecret, item.Key)
				}
				files = append(files, mountedFile{path: m.MountPath + "/" + item.Path, content: content, mode: mode})
			}
		case v.EmptyDir != nil:
			emptyDirs = append(emptyDirs, m.MountPath)
		default:
			return nil, nil, fmt.Errorf("volume %s: unsupported source", v.Name)
		}
	}
	return files, emptyDirs, nil
}
