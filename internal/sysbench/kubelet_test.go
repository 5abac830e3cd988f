package sysbench

import (
	"fmt"
	"strings"
)

// This file stands in for the kubelet when tests execute an Invocation: it resolves the env the
// way the kubelet does (secretKeyRef from a Secret's data, optional keys skipped, literal values
// with $(VAR) references to earlier variables expanded) and expands $(VAR) in command and args.

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
func containerProcess(inv Invocation, data map[string]string) (argv []string, env map[string]string, err error) {
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
