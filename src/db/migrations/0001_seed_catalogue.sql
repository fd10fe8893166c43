-- Custom SQL migration file, put your code below! --
-- Seeded catalogue. All amounts are integer kobo (N1 = 100 kobo).
INSERT INTO "services" ("code", "name", "sort_order") VALUES
	('airtime', 'Airtime', 1),
	('data', 'Data bundles', 2),
	('cable', 'Cable TV', 3),
	('electricity', 'Electricity', 4);
--> statement-breakpoint
INSERT INTO "networks" ("code", "name", "service", "sort_order") VALUES
	('mtn', 'MTN', 'airtime', 1),
	('airtel', 'Airtel', 'airtime', 2),
	('glo', 'Glo', 'airtime', 3),
	('9mobile', '9mobile', 'airtime', 4),
	('ikedc', 'Ikeja Electric', 'electricity', 1),
	('ekedc', 'Eko Electricity Distribution Company', 'electricity', 2),
	('aedc', 'Abuja Electricity Distribution Company', 'electricity', 3),
	('phed', 'Port Harcourt Electricity Distribution', 'electricity', 4),
	('ibedc', 'Ibadan Electricity Distribution Company', 'electricity', 5),
	('kedco', 'Kano Electricity Distribution Company', 'electricity', 6),
	('eedc', 'Enugu Electricity Distribution Company', 'electricity', 7),
	('jed', 'Jos Electricity Distribution', 'electricity', 8),
	('kaedco', 'Kaduna Electric', 'electricity', 9),
	('bedc', 'Benin Electricity Distribution Company', 'electricity', 10),
	('yedc', 'Yola Electricity Distribution Company', 'electricity', 11),
	('dstv', 'DStv', 'cable', 1),
	('gotv', 'GOtv', 'cable', 2),
	('startimes', 'StarTimes', 'cable', 3),
	('showmax', 'Showmax', 'cable', 4);
--> statement-breakpoint
-- Airtime: one range product per telecom network (N50 to N50,000)
INSERT INTO "products" ("code", "name", "service", "network", "kind", "price_kobo", "min_amount_kobo", "max_amount_kobo", "discount_bps", "requested_mb", "validity_days", "meter_type", "sort_order") VALUES
	('mtn-airtime', 'MTN Airtime', 'airtime', 'mtn', 'range', NULL, 5000, 5000000, 300, NULL, NULL, NULL, 1),
	('airtel-airtime', 'Airtel Airtime', 'airtime', 'airtel', 'range', NULL, 5000, 5000000, 340, NULL, NULL, NULL, 1),
	('glo-airtime', 'Glo Airtime', 'airtime', 'glo', 'range', NULL, 5000, 5000000, 400, NULL, NULL, NULL, 1),
	('9mobile-airtime', '9mobile Airtime', 'airtime', '9mobile', 'range', NULL, 5000, 5000000, 450, NULL, NULL, NULL, 1);
--> statement-breakpoint
-- MTN data bundles (fixed price)
INSERT INTO "products" ("code", "name", "service", "network", "kind", "price_kobo", "min_amount_kobo", "max_amount_kobo", "discount_bps", "requested_mb", "validity_days", "meter_type", "sort_order") VALUES
	('mtn-data-1gb-1d', 'MTN 1GB (1 day)', 'data', 'mtn', 'fixed', 50000, NULL, NULL, 0, 1024, 1, NULL, 2),
	('mtn-data-500mb-7d', 'MTN 500MB (7 days)', 'data', 'mtn', 'fixed', 50000, NULL, NULL, 0, 500, 7, NULL, 3),
	('mtn-data-1.5gb-2d', 'MTN 1.5GB (2 days)', 'data', 'mtn', 'fixed', 60000, NULL, NULL, 0, 1536, 2, NULL, 4),
	('mtn-data-1gb-7d', 'MTN 1GB (7 days)', 'data', 'mtn', 'fixed', 80000, NULL, NULL, 0, 1024, 7, NULL, 5),
	('mtn-data-2gb-30d', 'MTN 2GB (30 days)', 'data', 'mtn', 'fixed', 150000, NULL, NULL, 0, 2048, 30, NULL, 6),
	('mtn-data-3.5gb-30d', 'MTN 3.5GB (30 days)', 'data', 'mtn', 'fixed', 250000, NULL, NULL, 0, 3584, 30, NULL, 7),
	('mtn-data-10gb-30d', 'MTN 10GB (30 days)', 'data', 'mtn', 'fixed', 450000, NULL, NULL, 0, 10240, 30, NULL, 8),
	('mtn-data-20gb-30d', 'MTN 20GB (30 days)', 'data', 'mtn', 'fixed', 750000, NULL, NULL, 0, 20480, 30, NULL, 9),
	('mtn-data-40gb-30d', 'MTN 40GB (30 days)', 'data', 'mtn', 'fixed', 1100000, NULL, NULL, 0, 40960, 30, NULL, 10),
	('mtn-data-75gb-30d', 'MTN 75GB (30 days)', 'data', 'mtn', 'fixed', 1800000, NULL, NULL, 0, 76800, 30, NULL, 11);
--> statement-breakpoint
-- Airtel data bundles (fixed price)
INSERT INTO "products" ("code", "name", "service", "network", "kind", "price_kobo", "min_amount_kobo", "max_amount_kobo", "discount_bps", "requested_mb", "validity_days", "meter_type", "sort_order") VALUES
	('airtel-data-1gb-1d', 'Airtel 1GB (1 day)', 'data', 'airtel', 'fixed', 50000, NULL, NULL, 0, 1024, 1, NULL, 2),
	('airtel-data-500mb-7d', 'Airtel 500MB (7 days)', 'data', 'airtel', 'fixed', 50000, NULL, NULL, 0, 500, 7, NULL, 3),
	('airtel-data-2gb-2d', 'Airtel 2GB (2 days)', 'data', 'airtel', 'fixed', 75000, NULL, NULL, 0, 2048, 2, NULL, 4),
	('airtel-data-3gb-2d', 'Airtel 3GB (2 days)', 'data', 'airtel', 'fixed', 100000, NULL, NULL, 0, 3072, 2, NULL, 5),
	('airtel-data-2gb-30d', 'Airtel 2GB (30 days)', 'data', 'airtel', 'fixed', 150000, NULL, NULL, 0, 2048, 30, NULL, 6),
	('airtel-data-4gb-30d', 'Airtel 4GB (30 days)', 'data', 'airtel', 'fixed', 250000, NULL, NULL, 0, 4096, 30, NULL, 7),
	('airtel-data-10gb-30d', 'Airtel 10GB (30 days)', 'data', 'airtel', 'fixed', 400000, NULL, NULL, 0, 10240, 30, NULL, 8),
	('airtel-data-18gb-30d', 'Airtel 18GB (30 days)', 'data', 'airtel', 'fixed', 600000, NULL, NULL, 0, 18432, 30, NULL, 9),
	('airtel-data-25gb-30d', 'Airtel 25GB (30 days)', 'data', 'airtel', 'fixed', 800000, NULL, NULL, 0, 25600, 30, NULL, 10),
	('airtel-data-60gb-30d', 'Airtel 60GB (30 days)', 'data', 'airtel', 'fixed', 1500000, NULL, NULL, 0, 61440, 30, NULL, 11);
--> statement-breakpoint
-- Glo data bundles (fixed price)
INSERT INTO "products" ("code", "name", "service", "network", "kind", "price_kobo", "min_amount_kobo", "max_amount_kobo", "discount_bps", "requested_mb", "validity_days", "meter_type", "sort_order") VALUES
	('glo-data-750mb-1d', 'Glo 750MB (1 day)', 'data', 'glo', 'fixed', 20000, NULL, NULL, 0, 750, 1, NULL, 2),
	('glo-data-1.5gb-1d', 'Glo 1.5GB (1 day)', 'data', 'glo', 'fixed', 30000, NULL, NULL, 0, 1536, 1, NULL, 3),
	('glo-data-2.5gb-2d', 'Glo 2.5GB (2 days)', 'data', 'glo', 'fixed', 50000, NULL, NULL, 0, 2560, 2, NULL, 4),
	('glo-data-2.6gb-30d', 'Glo 2.6GB (30 days)', 'data', 'glo', 'fixed', 100000, NULL, NULL, 0, 2662, 30, NULL, 5),
	('glo-data-5gb-30d', 'Glo 5GB (30 days)', 'data', 'glo', 'fixed', 150000, NULL, NULL, 0, 5120, 30, NULL, 6),
	('glo-data-6gb-30d', 'Glo 6GB (30 days)', 'data', 'glo', 'fixed', 200000, NULL, NULL, 0, 6144, 30, NULL, 7),
	('glo-data-11gb-30d', 'Glo 11GB (30 days)', 'data', 'glo', 'fixed', 300000, NULL, NULL, 0, 11264, 30, NULL, 8),
	('glo-data-18gb-30d', 'Glo 18GB (30 days)', 'data', 'glo', 'fixed', 500000, NULL, NULL, 0, 18432, 30, NULL, 9),
	('glo-data-38gb-30d', 'Glo 38GB (30 days)', 'data', 'glo', 'fixed', 1000000, NULL, NULL, 0, 38912, 30, NULL, 10);
--> statement-breakpoint
-- 9mobile data bundles (fixed price)
INSERT INTO "products" ("code", "name", "service", "network", "kind", "price_kobo", "min_amount_kobo", "max_amount_kobo", "discount_bps", "requested_mb", "validity_days", "meter_type", "sort_order") VALUES
	('9mobile-data-650mb-1d', '9mobile 650MB (1 day)', 'data', '9mobile', 'fixed', 20000, NULL, NULL, 0, 650, 1, NULL, 2),
	('9mobile-data-1gb-1d', '9mobile 1GB (1 day)', 'data', '9mobile', 'fixed', 30000, NULL, NULL, 0, 1024, 1, NULL, 3),
	('9mobile-data-2gb-3d', '9mobile 2GB (3 days)', 'data', '9mobile', 'fixed', 50000, NULL, NULL, 0, 2048, 3, NULL, 4),
	('9mobile-data-500mb-30d', '9mobile 500MB (30 days)', 'data', '9mobile', 'fixed', 50000, NULL, NULL, 0, 500, 30, NULL, 5),
	('9mobile-data-1.5gb-30d', '9mobile 1.5GB (30 days)', 'data', '9mobile', 'fixed', 120000, NULL, NULL, 0, 1536, 30, NULL, 6),
	('9mobile-data-2gb-30d', '9mobile 2GB (30 days)', 'data', '9mobile', 'fixed', 150000, NULL, NULL, 0, 2048, 30, NULL, 7),
	('9mobile-data-4.5gb-30d', '9mobile 4.5GB (30 days)', 'data', '9mobile', 'fixed', 200000, NULL, NULL, 0, 4608, 30, NULL, 8),
	('9mobile-data-11gb-30d', '9mobile 11GB (30 days)', 'data', '9mobile', 'fixed', 400000, NULL, NULL, 0, 11264, 30, NULL, 9),
	('9mobile-data-15gb-30d', '9mobile 15GB (30 days)', 'data', '9mobile', 'fixed', 500000, NULL, NULL, 0, 15360, 30, NULL, 10),
	('9mobile-data-40gb-30d', '9mobile 40GB (30 days)', 'data', '9mobile', 'fixed', 1000000, NULL, NULL, 0, 40960, 30, NULL, 11);
--> statement-breakpoint
-- Electricity: prepaid and postpaid per disco (N1,000 to N500,000)
INSERT INTO "products" ("code", "name", "service", "network", "kind", "price_kobo", "min_amount_kobo", "max_amount_kobo", "discount_bps", "requested_mb", "validity_days", "meter_type", "sort_order") VALUES
	('ikedc-prepaid', 'Ikeja Electric Prepaid', 'electricity', 'ikedc', 'range', NULL, 100000, 50000000, 50, NULL, NULL, 'prepaid', 1),
	('ikedc-postpaid', 'Ikeja Electric Postpaid', 'electricity', 'ikedc', 'range', NULL, 100000, 50000000, 50, NULL, NULL, 'postpaid', 2),
	('ekedc-prepaid', 'Eko Electricity Distribution Company Prepaid', 'electricity', 'ekedc', 'range', NULL, 100000, 50000000, 60, NULL, NULL, 'prepaid', 1),
	('ekedc-postpaid', 'Eko Electricity Distribution Company Postpaid', 'electricity', 'ekedc', 'range', NULL, 100000, 50000000, 60, NULL, NULL, 'postpaid', 2),
	('aedc-prepaid', 'Abuja Electricity Distribution Company Prepaid', 'electricity', 'aedc', 'range', NULL, 100000, 50000000, 80, NULL, NULL, 'prepaid', 1),
	('aedc-postpaid', 'Abuja Electricity Distribution Company Postpaid', 'electricity', 'aedc', 'range', NULL, 100000, 50000000, 80, NULL, NULL, 'postpaid', 2),
	('phed-prepaid', 'Port Harcourt Electricity Distribution Prepaid', 'electricity', 'phed', 'range', NULL, 100000, 50000000, 120, NULL, NULL, 'prepaid', 1),
	('phed-postpaid', 'Port Harcourt Electricity Distribution Postpaid', 'electricity', 'phed', 'range', NULL, 100000, 50000000, 120, NULL, NULL, 'postpaid', 2),
	('ibedc-prepaid', 'Ibadan Electricity Distribution Company Prepaid', 'electricity', 'ibedc', 'range', NULL, 100000, 50000000, 100, NULL, NULL, 'prepaid', 1),
	('ibedc-postpaid', 'Ibadan Electricity Distribution Company Postpaid', 'electricity', 'ibedc', 'range', NULL, 100000, 50000000, 100, NULL, NULL, 'postpaid', 2),
	('kedco-prepaid', 'Kano Electricity Distribution Company Prepaid', 'electricity', 'kedco', 'range', NULL, 100000, 50000000, 130, NULL, NULL, 'prepaid', 1),
	('kedco-postpaid', 'Kano Electricity Distribution Company Postpaid', 'electricity', 'kedco', 'range', NULL, 100000, 50000000, 130, NULL, NULL, 'postpaid', 2),
	('eedc-prepaid', 'Enugu Electricity Distribution Company Prepaid', 'electricity', 'eedc', 'range', NULL, 100000, 50000000, 110, NULL, NULL, 'prepaid', 1),
	('eedc-postpaid', 'Enugu Electricity Distribution Company Postpaid', 'electricity', 'eedc', 'range', NULL, 100000, 50000000, 110, NULL, NULL, 'postpaid', 2),
	('jed-prepaid', 'Jos Electricity Distribution Prepaid', 'electricity', 'jed', 'range', NULL, 100000, 50000000, 150, NULL, NULL, 'prepaid', 1),
	('jed-postpaid', 'Jos Electricity Distribution Postpaid', 'electricity', 'jed', 'range', NULL, 100000, 50000000, 150, NULL, NULL, 'postpaid', 2),
	('kaedco-prepaid', 'Kaduna Electric Prepaid', 'electricity', 'kaedco', 'range', NULL, 100000, 50000000, 140, NULL, NULL, 'prepaid', 1),
	('kaedco-postpaid', 'Kaduna Electric Postpaid', 'electricity', 'kaedco', 'range', NULL, 100000, 50000000, 140, NULL, NULL, 'postpaid', 2),
	('bedc-prepaid', 'Benin Electricity Distribution Company Prepaid', 'electricity', 'bedc', 'range', NULL, 100000, 50000000, 90, NULL, NULL, 'prepaid', 1),
	('bedc-postpaid', 'Benin Electricity Distribution Company Postpaid', 'electricity', 'bedc', 'range', NULL, 100000, 50000000, 90, NULL, NULL, 'postpaid', 2),
	('yedc-prepaid', 'Yola Electricity Distribution Company Prepaid', 'electricity', 'yedc', 'range', NULL, 100000, 50000000, 150, NULL, NULL, 'prepaid', 1),
	('yedc-postpaid', 'Yola Electricity Distribution Company Postpaid', 'electricity', 'yedc', 'range', NULL, 100000, 50000000, 150, NULL, NULL, 'postpaid', 2);
--> statement-breakpoint
-- DStv bouquets (fixed price, 30 days)
INSERT INTO "products" ("code", "name", "service", "network", "kind", "price_kobo", "min_amount_kobo", "max_amount_kobo", "discount_bps", "requested_mb", "validity_days", "meter_type", "sort_order") VALUES
	('dstv-padi', 'DStv Padi', 'cable', 'dstv', 'fixed', 440000, NULL, NULL, 0, NULL, 30, NULL, 1),
	('dstv-yanga', 'DStv Yanga', 'cable', 'dstv', 'fixed', 600000, NULL, NULL, 0, NULL, 30, NULL, 2),
	('dstv-confam', 'DStv Confam', 'cable', 'dstv', 'fixed', 1100000, NULL, NULL, 0, NULL, 30, NULL, 3),
	('dstv-compact', 'DStv Compact', 'cable', 'dstv', 'fixed', 1900000, NULL, NULL, 0, NULL, 30, NULL, 4),
	('dstv-compact-plus', 'DStv Compact Plus', 'cable', 'dstv', 'fixed', 3000000, NULL, NULL, 0, NULL, 30, NULL, 5),
	('dstv-premium', 'DStv Premium', 'cable', 'dstv', 'fixed', 4450000, NULL, NULL, 0, NULL, 30, NULL, 6);
--> statement-breakpoint
-- GOtv bouquets (fixed price, 30 days)
INSERT INTO "products" ("code", "name", "service", "network", "kind", "price_kobo", "min_amount_kobo", "max_amount_kobo", "discount_bps", "requested_mb", "validity_days", "meter_type", "sort_order") VALUES
	('gotv-smallie', 'GOtv Smallie', 'cable', 'gotv', 'fixed', 190000, NULL, NULL, 0, NULL, 30, NULL, 1),
	('gotv-jinja', 'GOtv Jinja', 'cable', 'gotv', 'fixed', 390000, NULL, NULL, 0, NULL, 30, NULL, 2),
	('gotv-jolli', 'GOtv Jolli', 'cable', 'gotv', 'fixed', 580000, NULL, NULL, 0, NULL, 30, NULL, 3),
	('gotv-max', 'GOtv Max', 'cable', 'gotv', 'fixed', 850000, NULL, NULL, 0, NULL, 30, NULL, 4),
	('gotv-supa', 'GOtv Supa', 'cable', 'gotv', 'fixed', 1140000, NULL, NULL, 0, NULL, 30, NULL, 5),
	('gotv-supa-plus', 'GOtv Supa Plus', 'cable', 'gotv', 'fixed', 1680000, NULL, NULL, 0, NULL, 30, NULL, 6);
--> statement-breakpoint
-- StarTimes bouquets (fixed price, 30 days)
INSERT INTO "products" ("code", "name", "service", "network", "kind", "price_kobo", "min_amount_kobo", "max_amount_kobo", "discount_bps", "requested_mb", "validity_days", "meter_type", "sort_order") VALUES
	('startimes-nova', 'StarTimes Nova', 'cable', 'startimes', 'fixed', 210000, NULL, NULL, 0, NULL, 30, NULL, 1),
	('startimes-basic', 'StarTimes Basic', 'cable', 'startimes', 'fixed', 400000, NULL, NULL, 0, NULL, 30, NULL, 2),
	('startimes-smart', 'StarTimes Smart', 'cable', 'startimes', 'fixed', 510000, NULL, NULL, 0, NULL, 30, NULL, 3),
	('startimes-classic', 'StarTimes Classic', 'cable', 'startimes', 'fixed', 600000, NULL, NULL, 0, NULL, 30, NULL, 4),
	('startimes-super', 'StarTimes Super', 'cable', 'startimes', 'fixed', 980000, NULL, NULL, 0, NULL, 30, NULL, 5);
--> statement-breakpoint
-- Showmax bouquets (fixed price, 30 days)
INSERT INTO "products" ("code", "name", "service", "network", "kind", "price_kobo", "min_amount_kobo", "max_amount_kobo", "discount_bps", "requested_mb", "validity_days", "meter_type", "sort_order") VALUES
	('showmax-mobile', 'Showmax Mobile', 'cable', 'showmax', 'fixed', 350000, NULL, NULL, 0, NULL, 30, NULL, 1),
	('showmax-pro-mobile', 'Showmax Pro Mobile', 'cable', 'showmax', 'fixed', 630000, NULL, NULL, 0, NULL, 30, NULL, 2),
	('showmax-entertainment', 'Showmax Entertainment', 'cable', 'showmax', 'fixed', 700000, NULL, NULL, 0, NULL, 30, NULL, 3);
