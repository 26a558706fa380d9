output "region" {
  description = "AWS region of the platform."
  value       = var.region
}

output "cluster_name" {
  description = "EKS cluster name."
  value       = module.eks.cluster_name
}

output "configure_kubectl" {
  description = "Command that points kubectl at the cluster."
  value       = "aws eks update-kubeconfig --region ${var.region} --name ${module.eks.cluster_name}"
}

output "vpc_id" {
  description = "VPC of the cluster (the AWS Load Balancer Controller's --set vpcId)."
  value       = module.vpc.vpc_id
}

output "ecr_registry" {
  description = "Registry host of the ECR repositories: the chart's imageRegistry and the docker login target."
  value       = "${data.aws_caller_identity.current.account_id}.dkr.ecr.${var.region}.amazonaws.com"
}

output "ecr_repository_urls" {
  description = "Repository URL per image."
  value       = { for name, repository in aws_ecr_repository.images : name => repository.repository_url }
}

output "rds_endpoint" {
  description = "RDS MySQL endpoint (host:port); empty on the dynamodb store."
  value       = var.purchases_store == "mysql" ? aws_db_instance.purchases[0].endpoint : ""
}

output "rds_jdbc_url" {
  description = "JDBC URL of the purchases database: the chart's persistence.mysql.url; empty on the dynamodb store."
  value       = local.rds_jdbc_url
}

output "rds_master_user_secret_arn" {
  description = "Secrets Manager secret holding the RDS master username and password, which RDS rotates (scripts/eks.sh reads it to manage the database users); empty on the dynamodb store."
  value       = var.purchases_store == "mysql" ? aws_db_instance.purchases[0].master_user_secret[0].secret_arn : ""
}

output "dynamodb_table_name" {
  description = "DynamoDB table of purchases: the chart's persistence.dynamodb.table."
  value       = aws_dynamodb_table.purchases.name
}

output "purchases_service_role_arn" {
  description = "IAM role for purchases-service (IRSA): the chart's purchasesService.serviceAccount.roleArn."
  value       = aws_iam_role.purchases_service.arn
}

output "load_balancer_controller_role_arn" {
  description = "IAM role for the AWS Load Balancer Controller's ServiceAccount."
  value       = module.load_balancer_controller_irsa.iam_role_arn
}

output "idempotency_redis_url" {
  description = "URL of the ElastiCache idempotency store (TLS) when idempotency_elasticache is on, else empty: the chart's purchaseApi.idempotency.redisUrl."
  value       = local.idempotency_redis_url
}

locals {
  rds_jdbc_url = var.purchases_store == "mysql" ? "jdbc:mysql://${aws_db_instance.purchases[0].endpoint}/${aws_db_instance.purchases[0].db_name}" : ""
  # The chart's mysql values only with RDS: its schema refuses an empty JDBC URL.
  mysql_helm_values = {
    for store, values in { mysql = { url = local.rds_jdbc_url, existingSecret = "supermarket-mysql" } } :
    store => values if var.purchases_store == "mysql"
  }
}

output "helm_values" {
  description = "Chart values derived from this infrastructure: terraform output -raw helm_values > values-eks.yaml."
  value = yamlencode({
    imageRegistry = "${data.aws_caller_identity.current.account_id}.dkr.ecr.${var.region}.amazonaws.com"
    persistence = merge(local.mysql_helm_values, {
      dynamodb = {
        table  = aws_dynamodb_table.purchases.name
        region = var.region
      }
    })
    purchasesService = {
      serviceAccount = {
        roleArn = aws_iam_role.purchases_service.arn
      }
    }
    # "" keeps the chart's in-cluster Redis.
    purchaseApi = {
      idempotency = {
        redisUrl = local.idempotency_redis_url
      }
    }
  })
}

output "cluster_autoscaler_role_arn" {
  description = "IAM role for the Cluster Autoscaler's ServiceAccount (kube-system/cluster-autoscaler)."
  value       = module.cluster_autoscaler_irsa.iam_role_arn
}
