package expr

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

func TestCacheReuses(t *testing.T) {
	t.Parallel()
	c := NewCache(newTestEnv(t), 8)
	a, err := c.Get("input.x > 1", KindBool)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Get("input.x > 1", KindBool)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Error("same source compiled twice")
	}
	d, err := c.Get("input.x > 1", KindAny)
	if err != nil {
		t.Fatal(err)
	}
	if d == a {
		t.Error("kinds share a cache entry")
	}
}

func TestCacheEvicts(t *testing.T) {
	t.Parallel()
	c := NewCache(newTestEnv(t), 3)
	first, _ := c.Get("0", KindAny)
	for i := 1; i < 10; i++ {
		if _, err := c.Get(fmt.Sprint(i), KindAny); err != nil {
			t.Fatal(err)
		}
		if c.Len() > 3 {
			t.Fatalf("Len = %d, want ≤ 3", c.Len())
		}
	}
	again, _ := c.Get("0", KindAny)
	if again == first {
		t.Error("evicted program still returned")
	}
}

func TestCacheKeepsRecentlyUsed(t *testing.T) {
	t.Parallel()
	c := NewCache(newTestEnv(t), 2)
	a, _ := c.Get("1", KindAny)
	c.Get("2", KindAny)
	c.Get("1", KindAny) // touch
	c.Get("3", KindAny) // evicts "2"
	if again, _ := c.Get("1", KindAny); again != a {
		t.Error("recently used program was evicted")
	}
}

func TestCacheDoesNotStoreFailures(t *testing.T) {
	t.Parallel()
	c := NewCache(newTestEnv(t), 2)
	if _, err := c.Get("nope(", KindAny); !errors.Is(err, ErrCompile) {
		t.Fatalf("err = %v", err)
	}
	if c.Len() != 0 {
		t.Errorf("Len = %d after a failure", c.Len())
	}
}

func TestCacheConcurrent(t *testing.T) {
	t.Parallel()
	c := NewCache(newTestEnv(t), 4)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				if _, err := c.Get(fmt.Sprint((g+i)%6), KindAny); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if c.Len() > 4 {
		t.Errorf("Len = %d", c.Len())
	}
}
