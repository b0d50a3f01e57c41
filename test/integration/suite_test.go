package integration

import (
	"context"
	"testing"
)

var ctx = context.Background()

// TestProvider runs the scenarios in parallel, each in its own namespace with its
// own simulator or runtime targets, then the load scenarios one at a time, then
// searches everything the provider wrote for secrets.
func TestProvider(t *testing.T) {
	// First: it weighs the process's heap, which the scenarios' work (a
	// namespace's runtime clients built and evicted, listings) moves by more
	// than it measures. It makes no managed resource.
	t.Run("UnrelatedSecretsStayOut", testUnrelatedSecretsStayOut)
	// Alone and before any scenario: it checks metric counts over every
	// resource.
	t.Run("CredentialsInView", testCredentialsInView)
	t.Run("ShippedWiring", testShippedWiring)
	t.Run("scenarios", func(t *testing.T) {
		t.Run("IASApplication", func(t *testing.T) {
			t.Run("Create", testCreate)
			t.Run("CreatedAsTheOperatorCreates", testCreatedAsTheOperatorCreates)
			t.Run("AdoptByName", testAdopt)
			t.Run("AdoptByExternalName", testAdoptByExternalName)
			t.Run("TwoAppsWithTheName", testTwoApps)
			t.Run("NonChargedApp", testNonCharged)
			t.Run("ConnectionSecretDeleted", testConnectionSecretDeleted)
			t.Run("DriftInIAS", testDrift)
			t.Run("Delete", testDelete)
			t.Run("FaultsAndRetryAfter", testFaults)
			t.Run("FailureAfterAppCreated", testFailAfterCreate)
			t.Run("BadProviderConfig", testBadProviderConfig)
			t.Run("CredentialsAndURLChange", testCredentialsChange)
			t.Run("ClusterProviderConfigDefault", testClusterProviderConfig)
			t.Run("ManagementPolicies", testManagementPolicies)
			t.Run("SecretValidityAndRotation", testRotation)
			t.Run("AdmissionRefusesBadValues", testAdmissionRefusesBadValues)
			t.Run("LostCreateAnswerWithListLag", testLostCreateAnswerWithListLag)
			t.Run("CrashAfterAppStored", testCrashAfterAppStored)
			t.Run("LateListedDuplicate", testLateListedDuplicate)
			t.Run("TwoResourcesOneNameWhileListsLag", testTwoResourcesOneNameWhileListsLag)
			t.Run("TwoAppsOfThisProvider", testTwoOwnApps)
			t.Run("SecretDeletedInIAS", testSecretDeletedInIAS)
			t.Run("TenantHangsThenRecovers", testTenantHangsThenRecovers)
			t.Run("CredentialsRejected", testCredentialsRejected)
			t.Run("CertificateLogin", testCertificateLogin)
			t.Run("CertificateRotated", testCertificateRotated)
			t.Run("CertificateExpiredOrUntrusted", testCertificateExpiredOrUntrusted)
			t.Run("PasswordToCertificate", testPasswordToCertificate)
			t.Run("OneOwnerAcrossNamespaces", testOneOwner)
			t.Run("PlatformCredentialsWhereAdmitted", testPlatformCredentialsWhereAdmitted)
			t.Run("TenantSharedApart", testTenantSharedApart)
			t.Run("HostileAnswers", testHostileAnswers)
			t.Run("NeighbourNeverHoldsThePlatformsLogons", testNeighbourNeverHoldsThePlatformsLogons)
		})
		t.Run("RuntimeSecret", func(t *testing.T) {
			t.Run("ApplicationRefDriftAndRotation", testRuntimeWithApplicationRef)
			t.Run("ApplicationSelector", testRuntimeApplicationSelector)
			t.Run("WaitingForPrerequisites", testRuntimeWaiting)
			t.Run("RefusedKubeconfigs", testRuntimeRefusedKubeconfigs)
			t.Run("UnmanagedSecretLeftAlone", testRuntimeUnmanagedSecret)
			t.Run("DeleteChangedSecret", testRuntimeDeleteChangedSecret)
			t.Run("TargetNamespaceMissing", testRuntimeTargetNamespaceMissing)
			t.Run("DeleteAfterKubeconfigRemoved", testRuntimeDeleteAfterKubeconfigRemoved)
			t.Run("RuntimeStoppedAndStarted", testRuntimeStoppedAndStarted)
			t.Run("RotationWaitsForRuntimes", testRotationWaitsForRuntimes)
			t.Run("RuntimeRefusesThenRecovers", testRuntimeRefusesThenRecovers)
			t.Run("RuntimeRedirects", testRuntimeRedirects)
			t.Run("DeleteGoneRuntime", testDeleteGoneRuntime)
			t.Run("DeletionOrder", testDeletionOrder)
			t.Run("RuntimeWatcherRepairs", testRuntimeWatcherRepairs)
			t.Run("RuntimeWatcherRefusesForgedCertificates", testRuntimeWatcherRefusesForgedCertificates)
			t.Run("IndexedLookups", testIndexedLookups)
		})
		t.Run("KymaBridge", testKymaBridge)
		t.Run("KeptWhileKymaLives", testKeptWhileKymaLives)
	})
	// Alone: at the suite's 3s poll its 200 resources keep their tenant's token
	// bucket busy, and reconciles waiting for tokens would hold the workers that
	// the scenarios above need.
	t.Run("ManyAtOnceWithinRateLimit", testMany)
	// Alone: its 40 throttling targets are failing targets, whose probes take
	// the process's slots for calls to failing targets from the scenarios
	// above, which fail on purpose too.
	t.Run("ThrottlingNeighbours", testThrottlingNeighbours)
	t.Run("ManyRuntimesSmallClientCache", testManyRuntimes)
	t.Run("NoSecretInLogsEventsOrStatus", testNoLeaks)
	t.Run("MetricsTableMatchesExports", testMetricsTable)
	// Restarts the provider: after the metrics table, whose figures need the
	// deletions the scenarios made in this process.
	t.Run("LargeTenantNeighbours", testLargeTenantNeighbours)
	// Last: a restart replaces the provider and its metrics registry.
	t.Run("RestartBesideUnreachableRuntimes", testRestartBesideUnreachableRuntimes)
	t.Run("NoSecretInLogsEventsOrStatusAfterRestart", testNoLeaks)
	// Last: restarts the provider with a bound of one namespaced set of
	// credentials.
	t.Run("NamespacedCredentialsBounded", testNamespacedCredentialsBounded)
}
