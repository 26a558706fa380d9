variable "region" {
  type        = string
  description = "AWS region for every resource."
  default     = "us-east-1"
}

variable "cluster_name" {
  type        = string
  description = "Name of the EKS cluster; also the prefix of the other resources' names."
  default     = "supermarket"
}

variable "cluster_version" {
  type        = string
  description = "Kubernetes version of the EKS control plane (the chart is validated against it). 1.35: in EKS standard support until 2027-03-27 (deploy/README.md, \"Versions\")."
  default     = "1.35"
}

variable "node_instance_type" {
  type        = string
  description = "EC2 instance type of the worker nodes. The default fits the chart's values.yaml; terraform/presets/<preset>.tfvars sets the nodes each values-<preset>.yaml is sized for (t3.medium for micro, m5.xlarge for xlarge)."
  default     = "m5.large"
}

variable "node_count" {
  type = object({
    min     = number
    max     = number
    desired = number
  })
  description = "Size of the managed node group: minimum, maximum and initial number of nodes. The chart's pods must fit on the minimum (the Cluster Autoscaler may shrink the group to it); the maximum is what the autoscaler may add for purchase-api's HPA."
  default = {
    min     = 4
    max     = 8
    desired = 4
  }

  validation {
    condition     = var.node_count.min <= var.node_count.desired && var.node_count.desired <= var.node_count.max
    error_message = "node_count must satisfy min <= desired <= max."
  }
}

variable "vpc_cidr" {
  type        = string
  description = "CIDR block of the VPC; split into public, private and database subnets over three availability zones."
  default     = "10.42.0.0/16"
}

variable "single_nat_gateway" {
  type        = bool
  description = "One NAT gateway for the whole VPC (cheaper) instead of one per availability zone (survives a zone outage)."
  default     = true
}

variable "purchases_store" {
  type        = string
  description = "Where purchases-service stores purchases: mysql (RDS is created) or dynamodb (no RDS; the table is created either way, and costs nothing idle on demand). scripts/eks.sh passes its --store."
  default     = "mysql"

  validation {
    condition     = contains(["mysql", "dynamodb"], var.purchases_store)
    error_message = "purchases_store is mysql or dynamodb."
  }
}

variable "rds_instance_class" {
  type        = string
  description = "Instance class of the RDS MySQL database that stores the purchases (mysql store)."
  default     = "db.t3.medium"
}

variable "rds_engine_version" {
  type        = string
  description = "MySQL major version of the RDS instance: RDS picks its current minor and applies later minors in the maintenance window (auto_minor_version_upgrade), so a retired minor never breaks a create."
  default     = "8.4"
}

variable "rds_allocated_storage_gb" {
  type        = number
  description = "Storage of the RDS instance in GiB (gp3)."
  default     = 50
}

variable "rds_multi_az" {
  type        = bool
  description = "Run RDS with a synchronous standby in a second availability zone."
  default     = false
}

variable "rds_skip_final_snapshot" {
  type        = bool
  description = "Delete the RDS instance without a final snapshot (scripts/eks.sh down --skip-final-snapshot). False: the snapshot is named after the instance's creation time, so every create/destroy cycle leaves its own."
  default     = false
}

variable "rds_deletion_protection" {
  type        = bool
  description = "Refuse to delete the RDS instance (turn off before terraform destroy)."
  default     = true
}

variable "idempotency_elasticache" {
  type        = bool
  description = "Create an ElastiCache Redis as purchase-api's idempotency store (its URL goes into the helm_values output, replacing the chart's in-cluster Redis)."
  default     = false
}

variable "idempotency_elasticache_node_type" {
  type        = string
  description = "Node type of that ElastiCache Redis: about 240 bytes per idempotency key held for API_IDEMPOTENCY_TTL (docs/operations.md, Idempotency keys)."
  default     = "cache.t4g.small"
}

variable "dynamodb_table_name" {
  type        = string
  description = "Name of the DynamoDB table of purchases (dynamodb store); the chart's persistence.dynamodb.table."
  default     = "purchases"
}

variable "kubernetes_namespace" {
  type        = string
  description = "Namespace the Helm release is installed in; the IRSA trust is limited to it."
  default     = "supermarket"
}

variable "purchases_service_account_name" {
  type        = string
  description = "ServiceAccount of purchases-service as the chart names it (<release fullname>-purchases-service; supermarket-purchases-service for a release named supermarket)."
  default     = "supermarket-purchases-service"
}

variable "ecr_repositories" {
  type        = set(string)
  description = "ECR repositories to create, one per image."
  default     = ["purchase-api", "store-service", "purchases-service", "load-client"]
}

variable "tags" {
  type        = map(string)
  description = "Extra tags for every resource."
  default     = {}
}
