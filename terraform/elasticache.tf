# Optional: a managed idempotency store for purchase-api (variable idempotency_elasticache), in
# place of the chart's in-cluster Redis. One node, TLS in transit, encrypted at rest, reachable
# from the EKS nodes only; volatile-ttl so a full cache evicts the keys nearest their expiry
# instead of refusing claims. Its URL is in the helm_values output (purchaseApi.idempotency.redisUrl).
resource "aws_security_group" "idempotency" {
  count = var.idempotency_elasticache ? 1 : 0

  name        = "${var.cluster_name}-idempotency"
  description = "Redis from the EKS nodes only"
  vpc_id      = module.vpc.vpc_id
}

resource "aws_vpc_security_group_ingress_rule" "idempotency_from_nodes" {
  count = var.idempotency_elasticache ? 1 : 0

  security_group_id            = aws_security_group.idempotency[0].id
  description                  = "Redis from the EKS worker nodes"
  referenced_security_group_id = module.eks.node_security_group_id
  from_port                    = 6379
  to_port                      = 6379
  ip_protocol                  = "tcp"
}

resource "aws_elasticache_subnet_group" "idempotency" {
  count = var.idempotency_elasticache ? 1 : 0

  name       = "${var.cluster_name}-idempotency"
  subnet_ids = module.vpc.private_subnets
}

resource "aws_elasticache_parameter_group" "idempotency" {
  count = var.idempotency_elasticache ? 1 : 0

  name   = "${var.cluster_name}-idempotency"
  family = "redis7"

  parameter {
    name  = "maxmemory-policy"
    value = "volatile-ttl"
  }
}

resource "aws_elasticache_replication_group" "idempotency" {
  count = var.idempotency_elasticache ? 1 : 0

  replication_group_id       = "${var.cluster_name}-idempotency"
  description                = "purchase-api idempotency keys"
  engine                     = "redis"
  engine_version             = "7.1"
  node_type                  = var.idempotency_elasticache_node_type
  num_cache_clusters         = 1
  port                       = 6379
  parameter_group_name       = aws_elasticache_parameter_group.idempotency[0].name
  subnet_group_name          = aws_elasticache_subnet_group.idempotency[0].name
  security_group_ids         = [aws_security_group.idempotency[0].id]
  at_rest_encryption_enabled = true
  transit_encryption_enabled = true
}

locals {
  # rediss://: TLS, as transit_encryption_enabled requires.
  idempotency_redis_url = var.idempotency_elasticache ? "rediss://${aws_elasticache_replication_group.idempotency[0].primary_endpoint_address}:6379/0" : ""
}
