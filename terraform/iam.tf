# IRSA: the role purchases-service's pods assume through their ServiceAccount's web identity
# token. Trusted only for that one ServiceAccount in that one namespace; allowed only what the
# service does with its table.
data "aws_iam_policy_document" "purchases_service_trust" {
  statement {
    actions = ["sts:AssumeRoleWithWebIdentity"]

    principals {
      type        = "Federated"
      identifiers = [module.eks.oidc_provider_arn]
    }

    condition {
      test     = "StringEquals"
      variable = "${module.eks.oidc_provider}:sub"
      values   = ["system:serviceaccount:${var.kubernetes_namespace}:${var.purchases_service_account_name}"]
    }

    condition {
      test     = "StringEquals"
      variable = "${module.eks.oidc_provider}:aud"
      values   = ["sts.amazonaws.com"]
    }
  }
}

data "aws_iam_policy_document" "purchases_table" {
  statement {
    actions = [
      "dynamodb:BatchWriteItem",
      "dynamodb:PutItem",
      "dynamodb:GetItem",
      "dynamodb:BatchGetItem",
      "dynamodb:Query",
      "dynamodb:Scan",
      "dynamodb:DescribeTable",
    ]
    resources = [
      aws_dynamodb_table.purchases.arn,
      "${aws_dynamodb_table.purchases.arn}/index/*",
    ]
  }
}

resource "aws_iam_role" "purchases_service" {
  name               = "${var.cluster_name}-purchases-service"
  description        = "Assumed by purchases-service pods (IRSA) to store purchases in DynamoDB"
  assume_role_policy = data.aws_iam_policy_document.purchases_service_trust.json
}

resource "aws_iam_role_policy" "purchases_table" {
  name   = "purchases-table"
  role   = aws_iam_role.purchases_service.id
  policy = data.aws_iam_policy_document.purchases_table.json
}
