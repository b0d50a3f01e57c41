// Generate deepcopy methods, CRDs and managed resource method sets.
//go:generate rm -rf ../package/crds
//go:generate go tool -modfile=../hack/tools/go.mod controller-gen object:headerFile=../hack/boilerplate.go.txt paths=./... crd:allowDangerousTypes=false,crdVersions=v1 output:artifacts:config=../package/crds
//go:generate go tool -modfile=../hack/tools/go.mod angryjet generate-methodsets --header-file=../hack/boilerplate.go.txt ./...

package apis
