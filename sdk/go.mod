module github.com/ductor/ductor/sdk

go 1.22
