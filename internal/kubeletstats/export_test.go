package kubeletstats

// PollsDone is the number of Polls the sampler has finished.
func PollsDone(s *Sampler) int64 { return s.polls.Load() }
