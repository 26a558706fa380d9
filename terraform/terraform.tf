# Terraform and provider versions, pinned exactly so every apply uses the same code; bump them
# deliberately (terraform init -upgrade) and commit the .terraform.lock.hcl it writes.
terraform {
  required_version = ">= 1.5.7, < 2.0.0"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "= 5.100.0"
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
