package taskrun

// The messages, for the tests of package taskrun_test.
const (
	ResumedMessage      = resumedMessage
	ResumedAgainMessage = resumedAgainMessage
	LostMessage         = lostMessage
	LostResumedMessage  = lostResumedMessage
)

// Live is liveCount, for the tests.
func (m *Manager) Live() int { return m.liveCount() }
