# Nodes for helm/supermarket/values-xlarge.yaml (4-CPU-limit pods on 4 vCPU / 16 GiB nodes):
#   terraform apply -var-file=presets/xlarge.tfvars
# deployment/NodeFitTest checks that the preset fits these nodes at its minimum with one rolling
# update, and at the HPA's maximum on node_count.max (the Cluster Autoscaler adds the nodes).
node_instance_type = "m5.xlarge"

# 6 nodes at least: the pods request 1.5 CPU each, and with store-service's second copy (copies: 2)
# five nodes leave no room for a rolling update of purchases-service.
node_count = {
  min     = 6
  max     = 9
  desired = 6
}

# The preset's store (values-<preset>.yaml's persistence.store); scripts/eks.sh --store overrides it.
purchases_store = "dynamodb"
