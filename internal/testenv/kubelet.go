package testenv

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FinishedJobStatus is what the Job controller writes when a Job with backoffLimit 0 ends, with
// the conditions the API server requires before Complete or Failed: the tests' fake kubelets
// (envtest runs no Job controller) finish Jobs with it.
func FinishedJobStatus(succeeded bool, start, end metav1.Time) batchv1.JobStatus {
	st := batchv1.JobStatus{StartTime: &start}
	if !succeeded {
		st.Failed = 1
		st.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonBackoffLimitExceeded,
				Message: "Job has reached the specified backoff limit", LastTransitionTime: end},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonBackoffLimitExceeded,
				Message: "Job has reached the specified backoff limit", LastTransitionTime: end},
		}
		return st
	}
	st.Succeeded = 1
	st.CompletionTime = &end
	st.Conditions = []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonCompletionsReached, LastTransitionTime: end},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonCompletionsReached, LastTransitionTime: end},
	}
	return st
}
