# MySQL for purchases-service's mysql store, created only for it (purchases_store). The master
# password is generated and kept by RDS in Secrets Manager (manage_master_user_password), so it is
# never in Terraform code or state; RDS rotates it every 7 days, which is why nothing in the
# cluster holds it: scripts/eks.sh reads it at each run only to manage the `migrations` and
# `purchases` users (docs/operations.md, "Database and broker passwords").
resource "aws_security_group" "rds" {
  count = var.purchases_store == "mysql" ? 1 : 0

  name        = "${var.cluster_name}-rds"
  description = "MySQL from the EKS nodes only"
  vpc_id      = module.vpc.vpc_id
}

resource "aws_vpc_security_group_ingress_rule" "rds_from_nodes" {
  count = var.purchases_store == "mysql" ? 1 : 0

  security_group_id            = aws_security_group.rds[0].id
  description                  = "MySQL from the EKS worker nodes"
  referenced_security_group_id = module.eks.node_security_group_id
  from_port                    = 3306
  to_port                      = 3306
  ip_protocol                  = "tcp"
}

resource "aws_db_instance" "purchases" {
  count = var.purchases_store == "mysql" ? 1 : 0

  identifier     = "${var.cluster_name}-purchases"
  engine         = "mysql"
  engine_version = var.rds_engine_version
  instance_class = var.rds_instance_class

  allocated_storage = var.rds_allocated_storage_gb
  storage_type      = "gp3"
  storage_encrypted = true

  db_name                     = "purchases"
  username                    = "supermarket"
  manage_master_user_password = true

  db_subnet_group_name   = module.vpc.database_subnet_group_name
  vpc_security_group_ids = [aws_security_group.rds[0].id]
  publicly_accessible    = false
  multi_az               = var.rds_multi_az

  backup_retention_period    = 7
  deletion_protection        = var.rds_deletion_protection
  auto_minor_version_upgrade = true
  skip_final_snapshot        = var.rds_skip_final_snapshot
  # Unique per instance: the time it was created (kept by ignore_changes below), so a second
  # create/destroy cycle does not collide with the first cycle's snapshot.
  final_snapshot_identifier = "${var.cluster_name}-purchases-final-${formatdate("YYYYMMDDhhmmss", timestamp())}"
  apply_immediately         = false

  lifecycle {
    ignore_changes = [final_snapshot_identifier]
  }
}
