# The StorageClass the chart's volumes name (global.storageClass: gp3). EKS clusters created at
# 1.30 or later have no default StorageClass, and the EBS CSI add-on installs none, so without
# this the broker's PersistentVolumeClaims would stay Pending and the broker would never start.
resource "kubernetes_storage_class_v1" "gp3" {
  metadata {
    name = "gp3"
    annotations = {
      # Also the default, for volumes that name no class.
      "storageclass.kubernetes.io/is-default-class" = "true"
    }
  }

  storage_provisioner = "ebs.csi.aws.com"
  reclaim_policy      = "Delete"
  # The volume is created in the zone of the node the pod is scheduled to, never the other way round.
  volume_binding_mode    = "WaitForFirstConsumer"
  allow_volume_expansion = true

  parameters = {
    type      = "gp3"
    encrypted = "true"
    fsType    = "ext4"
  }

  depends_on = [module.eks]
}
