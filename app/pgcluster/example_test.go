package pgcluster_test

import (
	"context"
	"fmt"
	"log"

	"github.com/ductor/ductor/app/pgcluster"
)

// ductor dev keeps its cluster in ./.ductor/pg: the first run creates it,
// later runs reuse it and its data, each stopping it on exit.
func ExampleStart() {
	ctx := context.Background()
	cluster, err := pgcluster.Start(ctx, pgcluster.Options{Dir: ".ductor/pg", Database: "ductor"})
	if err != nil {
		log.Fatal(err)
	}
	defer cluster.Stop(ctx)
	fmt.Println("DATABASE_URL=" + cluster.URL())
}

// A test run wants a fast cluster that is gone afterwards.
func ExampleCluster_Destroy() {
	ctx := context.Background()
	cluster, err := pgcluster.Start(ctx, pgcluster.Options{Dir: "/tmp/ductor-test-pg", Database: "ductor_test", Fast: true})
	if err != nil {
		log.Fatal(err)
	}
	defer cluster.Destroy(ctx)
	fmt.Println("TEST_DATABASE_URL=" + cluster.URL())
}
