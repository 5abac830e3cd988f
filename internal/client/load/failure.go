package load

// Failure says why a step's container failed, for status conditions and Events, with whether
// another attempt could succeed.
type Failure struct {
	// Code is the MySQL (server or client library) error code, 0 when there is none.
	Code int `json:"code"`
	// Reason is a sentence for the user: what happened and what to change. It quotes the
	// client's error lines, which never contain the password unless a custom script prints it
	// (the drivers never echo it, and the options that would print it are refused by the
	// builders). It is not cut: see sysbench.MaxReason.
	Reason string `json:"reason"`
	// Deterministic says that another attempt would fail the same way (the script or the
	// options decide it, not the server's state): the step is not retried.
	Deterministic bool `json:"deterministic,omitempty"`
}

func (f *Failure) Error() string { return f.Reason }
