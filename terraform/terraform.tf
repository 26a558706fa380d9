# Terraform and provider versions, pinned exactly so every apply uses the same code; bump them
# deliberately (terraform init -upgrade) and commit the .terraform.lock.hcl it writes.
terraform {
  required_version = ">= 1.5.7, < 2.0.0"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "= 5.100.0"
    }
    kubernetes = {
      source  = "hashicorp/kubernetes"
      version = "= 2.37.1"
    }
  }

  # State is local by default. For a team, add a backend, e.g.:
  # backend "s3" {
  #   bucket = "<state bucket>"
  #   key    = "supermarket/terraform.tfstate"
  #   region = "us-east-1"
  # }
}

provider "aws" {
  region = var.region

  default_tags {
    tags = merge(var.tags, {
      Project   = "supermarket"
      ManagedBy = "terraform"
    })
  }
}

# The cluster's API, for the objects Terraform creates inside it (storage.tf). The token comes
# from the AWS CLI at plan/apply time, so nothing long-lived is stored.
provider "kubernetes" {
  host                   = module.eks.cluster_endpoint
  cluster_ca_certificate = base64decode(module.eks.cluster_certificate_authority_data)

  exec {
    api_version = "client.authentication.k8s.io/v1beta1"
    command     = "aws"
    args        = ["eks", "get-token", "--cluster-name", module.eks.cluster_name, "--region", var.region]
  }
}
