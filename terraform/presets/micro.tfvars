# Nodes for helm/supermarket/values-micro.yaml (t3.micro-sized pods: <= 512 MiB, 250m CPU each):
#   terraform apply -var-file=presets/micro.tfvars
# Not t3.micro nodes: the VPC CNI allows 4 pods on a t3.micro (2 ENIs x 1 address + 2) and the
# DaemonSets (aws-node, kube-proxy, ebs-csi-node, eks-pod-identity-agent) take all 4. A
# t3.medium holds 17. deployment/NodeFitTest checks that the preset, the add-ons and the
# monitoring stack fit these nodes.
node_instance_type = "t3.medium"

node_count = {
  min     = 4
  max     = 5
  desired = 4
}

# The preset's store (values-<preset>.yaml's persistence.store); scripts/eks.sh --store overrides it.
purchases_store = "mysql"
