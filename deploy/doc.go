// Package deploy holds no code: its tests check the deployment files next
// to it (deploy/kubernetes, deploy/aws-batch) against the engines' own API
// types — Kubernetes' k8s.io/api/batch/v1 and the AWS SDK's batch and
// scheduler inputs — decoded strictly, unknown fields refused. Those
// modules are imported by the tests only, so no manejo binary links them.
package deploy
