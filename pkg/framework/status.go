package framework

import (
	"errors"
	"slices"
	"strings"
	"sync"
)

// Code is the outcome of a plugin call.
type Code int

// The codes a plugin may return. What each means at an extension point is
// documented on that extension point's interface.
const (
	// Success: the plugin ran and let the pod through.
	Success Code = iota
	// Error: an internal error; the pod is retried with backoff.
	Error
	// Unschedulable: the pod does not fit now; preemption may help.
	Unschedulable
	// UnschedulableAndUnresolvable: the pod does not fit and preemption
	// cannot change that on this node.
	UnschedulableAndUnresolvable
	// Wait: only for Permit, the pod waits for an Allow or Reject.
	Wait
	// Skip: for PreFilter/PreScore, the plugin has nothing to do for this
	// pod and its Filter/Score is not run; for Bind, let the next binder try.
	Skip
	// Pending: the pod waits on something outside the scheduler (e.g. a
	// gate); it is retried on an event, not after backoff.
	Pending
)

var codeNames = []string{"Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable", "Wait", "Skip", "Pending"}

func (c Code) String() string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "Unknown"
}

// Status is the result of a plugin call. A nil Status is Success.
type Status struct {
	code    Code
	reasons []string
	err     error
	plugin  string
}

// NewStatus makes a Status with the code and reasons. A Skip without
// reasons, which a dozen PreFilter and PreScore plugins return for most
// pods every cycle, is one shared status (WithPlugin and WithError return
// a copy of it, stamped, and leave it as it is).
func NewStatus(code Code, reasons ...string) *Status {
	if code == Skip && len(reasons) == 0 {
		return skipStatus
	}
	return &Status{code: code, reasons: reasons}
}

// skipStatus is NewStatus(Skip), shared.
var skipStatus = &Status{code: Skip}

// writable is s, or a copy of it when s is shared.
func (s *Status) writable() *Status {
	if s == skipStatus {
		c := *s
		return &c
	}
	return s
}

// Clone is a copy of s that changes to one do not reach (nil for nil).
func (s *Status) Clone() *Status {
	if s == nil {
		return nil
	}
	c := *s
	c.reasons = slices.Clone(s.reasons)
	return &c
}

// AsStatus wraps an error as an Error status; nil gives nil.
func AsStatus(err error) *Status {
	if err == nil {
		return nil
	}
	return &Status{code: Error, reasons: []string{err.Error()}, err: err}
}

// WithError attaches an underlying error, returned by AsError.
func (s *Status) WithError(err error) *Status {
	if s != nil {
		s = s.writable()
		s.err = err
	}
	return s
}

// AppendReason adds a reason (upstream's AppendReason: a pod group's
// status gains its PodGroupPostFilter's message).
func (s *Status) AppendReason(reason string) *Status {
	if s == nil {
		s = &Status{}
	}
	s = s.writable()
	s.reasons = append(s.reasons, reason)
	return s
}

// Code returns the code; Success for nil.
func (s *Status) Code() Code {
	if s == nil {
		return Success
	}
	return s.code
}

// Reasons returns the reasons.
func (s *Status) Reasons() []string {
	if s == nil {
		return nil
	}
	return s.reasons
}

// Message joins the reasons with ", ".
func (s *Status) Message() string {
	if s == nil {
		return ""
	}
	return strings.Join(s.reasons, ", ")
}

// Plugin is the plugin that produced the status (stamped by the runtime).
func (s *Status) Plugin() string {
	if s == nil {
		return ""
	}
	return s.plugin
}

// WithPlugin stamps the plugin name and returns s.
func (s *Status) WithPlugin(name string) *Status {
	if s != nil {
		s = s.writable()
		s.plugin = name
	}
	return s
}

// IsSuccess is true for nil or Success.
func (s *Status) IsSuccess() bool { return s.Code() == Success }

// IsSkip is true for Skip.
func (s *Status) IsSkip() bool { return s.Code() == Skip }

// IsWait is true for Wait.
func (s *Status) IsWait() bool { return s.Code() == Wait }

// IsRejected is true for Unschedulable, UnschedulableAndUnresolvable and Pending.
func (s *Status) IsRejected() bool {
	c := s.Code()
	return c == Unschedulable || c == UnschedulableAndUnresolvable || c == Pending
}

// AsError turns a non-success status into an error.
func (s *Status) AsError() error {
	if s.IsSuccess() || s.IsSkip() {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	return errors.New(s.Message())
}

// Equal compares code, reasons and plugin (for tests).
func (s *Status) Equal(o *Status) bool {
	if s == nil || o == nil {
		return s.IsSuccess() && o.IsSuccess()
	}
	if s.code != o.code || s.plugin != o.plugin || len(s.reasons) != len(o.reasons) {
		return false
	}
	for i := range s.reasons {
		if s.reasons[i] != o.reasons[i] {
			return false
		}
	}
	return true
}

func (s *Status) String() string {
	if s == nil {
		return "Success"
	}
	b := s.code.String()
	if s.plugin != "" {
		b += " (" + s.plugin + ")"
	}
	if len(s.reasons) > 0 {
		b += ": " + s.Message()
	}
	return b
}

// maxInterned bounds a StatusInterner: past it, statuses are returned as
// they are.
const maxInterned = 1024

// StatusInterner gives equal rejections one *Status: the same code,
// plugin and reasons, and no underlying error. Thousands of nodes that
// reject a pod for the same reason then hold the same pointer, and a
// FitError counts them by pointer. Safe for concurrent use; the statuses
// it returns are shared and must not be changed (WithPlugin on them with
// another name, WithError).
type StatusInterner struct {
	mu  sync.Mutex
	m   map[string]*Status
	key []byte
}

// Intern returns the status equal to s it has, else s (kept for the next).
func (in *StatusInterner) Intern(s *Status) *Status {
	if s == nil || s.err != nil || !s.IsRejected() {
		return s
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	k := append(in.key[:0], byte(s.code))
	k = append(k, s.plugin...)
	for _, r := range s.reasons {
		k = append(k, 0)
		k = append(k, r...)
	}
	in.key = k[:0]
	if got, ok := in.m[string(k)]; ok {
		return got
	}
	if in.m == nil {
		in.m = map[string]*Status{}
	}
	if len(in.m) < maxInterned {
		in.m[string(k)] = s
	}
	return s
}
