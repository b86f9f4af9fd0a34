package server

import (
	"context"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/version"
	"github.com/ductor/ductor/db"
)

// handleHealthz answers while the process is up, with its version.
func handleHealthz() echo.HandlerFunc {
	return func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"status": "ok", "version": version.String()})
	}
}

// handleReadyz answers 200 when the database is reachable and migrated.
func handleReadyz(pool *pgxpool.Pool) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
		defer cancel()
		if err := pool.Ping(ctx); err != nil {
			return apperr.Wrap(err, apperr.Unavailable, "database unreachable")
		}
		if err := db.Check(ctx, pool); err != nil {
			return apperr.Wrap(err, apperr.Unavailable, "database migrations are not current")
		}
		return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
	}
}
