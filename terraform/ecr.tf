# One repository per image. Tags are immutable: a tag names one build forever, which is what
# makes the chart's pinned tags mean something.
resource "aws_ecr_repository" "images" {
  for_each = var.ecr_repositories

  name                 = "supermarket/${each.key}"
  image_tag_mutability = "IMMUTABLE"
  # terraform destroy removes the repositories with their images; without it, a repository that
  # holds an image stops the destroy halfway.
  force_delete = true

  image_scanning_configuration {
    scan_on_push = true
  }

  encryption_configuration {
    encryption_type = "AES256"
  }
}

resource "aws_ecr_lifecycle_policy" "images" {
  for_each = aws_ecr_repository.images

  repository = each.value.name
  policy = jsonencode({
    rules = [{
      rulePriority = 1
      description  = "Keep the 30 most recent images"
      selection = {
        tagStatus   = "any"
        countType   = "imageCountMoreThan"
        countNumber = 30
      }
      action = { type = "expire" }
    }]
  })
}
