package tasks

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Stored is the wire form of a pending task (the root's PendingTask),
// inside its seal: everything needed to collect the task in another
// process.
type Stored struct {
	Version       int       `json:"version"`
	Server        string    `json:"server"`
	Tool          string    `json:"tool"`
	MCPName       string    `json:"mcpName"`
	TaskID        string    `json:"taskId"`
	Status        string    `json:"status,omitempty"`
	StatusMessage string    `json:"statusMessage,omitempty"`
	Principal     string    `json:"principal,omitempty"`
	Session       string    `json:"session,omitempty"` // a legacy Streamable HTTP session's id
	ID            string    `json:"id"`
	Issued        time.Time `json:"issued"`
}

// storedVersion is the version of Stored that Encode writes and Decode
// reads.
const storedVersion = 1

// Encode returns the JSON of s, of the current version.
func (s Stored) Encode() ([]byte, error) {
	s.Version = storedVersion
	return json.Marshal(s)
}

// DecodeStored decodes and checks the JSON of a pending task: its
// version, and that it names a server, a tool and a task. The status and
// message are cut to their bound.
func DecodeStored(b []byte) (Stored, error) {
	var s Stored
	if err := json.Unmarshal(b, &s); err != nil {
		return Stored{}, err
	}
	if s.Version != storedVersion {
		return Stored{}, fmt.Errorf("unsupported version %d", s.Version)
	}
	if s.Server == "" || s.MCPName == "" || s.TaskID == "" {
		return Stored{}, errors.New("missing server, tool or task id")
	}
	s.Status, s.StatusMessage = truncate(s.Status), truncate(s.StatusMessage)
	return s, nil
}
