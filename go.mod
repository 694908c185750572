module github.com/dime-project/dime

go 1.24.0

require (
	golang.org/x/term v0.34.0
	gonum.org/v1/gonum v0.17.0
	gonum.org/v1/netlib v0.0.0-20230729102104-8b8060e7531f
)

require golang.org/x/sys v0.35.0 // indirect
