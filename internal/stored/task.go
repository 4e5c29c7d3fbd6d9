package stored

// A stored pending task: the JSON the root package's PendingTask marshals
// to, before sealing, and the checks its decoding makes.

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/tasks"
)

// Task is the wire form of a pending task (the root's PendingTask),
// inside its seal: everything needed to collect the task in another
// process.
type Task struct {
	Version       int    `json:"version"`
	Server        string `json:"server"`
	Tool          string `json:"tool"`
	MCPName       string `json:"mcpName"`
	TaskID        string `json:"taskId"`
	Status        string `json:"status,omitempty"`
	StatusMessage string `json:"statusMessage,omitempty"`
	Principal     string `json:"principal,omitempty"`
	Session       string `json:"session,omitempty"` // a legacy Streamable HTTP session's id, stored sealed only
	// SessionNotStored: the task lives on a session whose id was not
	// stored (the state is not sealed): only the Adapter that made the
	// state knows it.
	SessionNotStored bool      `json:"sessionNotStored,omitempty"`
	ID               string    `json:"id"`
	Issued           time.Time `json:"issued"`
}

// taskVersion is the version of [Task] that [Task.Encode] writes and
// [DecodeTask] reads.
const taskVersion = 1

// Encode returns the JSON of s, of the current version.
func (s Task) Encode() ([]byte, error) {
	s.Version = taskVersion
	return json.Marshal(s)
}

// DecodeTask decodes and checks the JSON of a pending task: its version,
// and that it names a server, a tool and a task. The status and message
// are cut to their bound ([tasks.Truncate]).
func DecodeTask(b []byte) (Task, error) {
	var s Task
	if err := json.Unmarshal(b, &s); err != nil {
		return Task{}, err
	}
	if s.Version != taskVersion {
		return Task{}, fmt.Errorf("unsupported version %d", s.Version)
	}
	if s.Server == "" || s.MCPName == "" || s.TaskID == "" {
		return Task{}, errors.New("missing server, tool or task id")
	}
	s.Status, s.StatusMessage = tasks.Truncate(s.Status), tasks.Truncate(s.StatusMessage)
	return s, nil
}
