package pgstore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/scorehub/scorehub/internal/pgstore"
	"github.com/scorehub/scorehub/internal/pgtest"
	"github.com/scorehub/scorehub/registry"
)

// TestLargeArtifact stores and reads back an artifact far larger than the
// driver's buffers, and deletes it. SCOREHUB_PG_ARTIFACT_MIB sets its size
// (the formats' limit is 256 MiB); the default keeps the test quick.
func TestLargeArtifact(t *testing.T) {
	mib := 32
	if v := os.Getenv("SCOREHUB_PG_ARTIFACT_MIB"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("SCOREHUB_PG_ARTIFACT_MIB=%q is not a positive number", v)
		}
		mib = n
	}
	ctx := context.Background()
	db := open(t, pgstore.Config{URL: pgtest.DB(t)})
	data := make([]byte, mib<<20)
	for i := range data {
		data[i] = byte(i * 7 / 3)
	}
	h := sha256.Sum256(data)
	sum := hex.EncodeToString(h[:])

	start := time.Now()
	if err := db.PutArtifact(ctx, sum, data); err != nil {
		t.Fatal(err)
	}
	put := time.Since(start)
	start = time.Now()
	got, err := db.Artifact(ctx, sum)
	if err != nil {
		t.Fatal(err)
	}
	read := time.Since(start)
	if !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes that differ from the %d stored", len(got), len(data))
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("%d MiB artifact: stored in %v, read in %v; process peak heap %d MiB", mib, put, read, ms.HeapSys>>20)
	if err := db.DeleteArtifact(ctx, sum); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Artifact(ctx, sum); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("after DeleteArtifact: %v, want ErrNotFound", err)
	}
}
